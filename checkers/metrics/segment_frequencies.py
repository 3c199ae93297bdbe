"""Frequency tables per segment that a partition keeps: `SegmentFrequency(analyzer, by)` is the
frequency table of `analyzer`'s grouping columns and the segment columns `by`, stored and merged
over partitions like any frequency table (a sum of counts per key). Each segment's metrics come
from grouping the merged table by its segment columns: one Spark job for every segment."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from pyspark.sql import Column
from pyspark.sql import functions as F

from checkers.metrics import _grouping
from checkers.metrics._analyzer import (
    Analyzer,
    FrequencyAnalyzer,
    FrequencySummary,
    State,
)
from checkers.metrics._capped import TooManySegmentsError
from checkers.metrics._metric import MetricSource, MetricValue
from checkers.metrics.frequencies import COUNT, SET_ID, FrequencyState, key_column
from checkers.metrics.segments import SegmentMetrics

__all__ = ["SegmentFrequency", "segment_frequency_metrics"]


@dataclass(frozen=True, repr=False)
class SegmentFrequency(FrequencyAnalyzer):
    """`analyzer`'s frequency table with the segment columns `by` in its key."""

    analyzer: FrequencyAnalyzer
    by: tuple[str, ...]
    #: the inner analyzer's filter (part of it, so not compared)
    where: str | None = field(init=False, default=None, repr=False, compare=False)

    @property
    def columns(self) -> tuple[str, ...]:
        inner = self.analyzer.columns
        return (*(c for c in self.by if c not in inner), *inner)

    def __post_init__(self) -> None:
        object.__setattr__(self, "where", self.analyzer.where)

    @property
    def grouping_columns(self) -> tuple[str, ...]:
        inner = self.analyzer.grouping_columns
        return (*(c for c in self.by if c not in inner), *inner)

    def key_source(self, name: str) -> Column:
        return (
            self.analyzer.key_source(name)
            if name in self.analyzer.grouping_columns
            else F.col(name)
        )

    def value_from_frequencies(
        self, summary: FrequencySummary, extras: Sequence[object]
    ) -> MetricValue:
        # What the drift guard compares (a stored partition against its recomputation): the
        # table's distinct keys, rows and keys seen once, all exact counts.
        return {
            "keys": summary.all_groups,
            "rows": summary.all_rows,
            "singles": summary.singles,
        }

    def __repr__(self) -> str:
        return f"SegmentFrequency({self.analyzer!r}, by={list(self.by)!r})"


def segment_frequency_metrics(
    analyzers: Sequence[SegmentFrequency],
    merged: Mapping[Analyzer, State],
    *,
    max_segments: int,
) -> tuple[SegmentMetrics, int]:
    """Each segment's metrics of the inner analyzers from `analyzers`' tables merged over
    partitions, in one aggregation grouped by segment and grouping set; the Spark actions
    taken. TooManySegmentsError beyond `max_segments` segments."""
    if not analyzers:
        return {}, 0
    by = analyzers[0].by
    sets = _grouping.plan_sets([a.analyzer for a in analyzers])
    layout = _grouping.shared_layout(sets)
    segment_names = [f"__dq_s{i}" for i in range(len(by))]
    parts = []
    for s in sets:
        wrapper = SegmentFrequency(s.analyzers[0], by)
        state = merged.get(wrapper)
        if not isinstance(state, FrequencyState) or state.frequencies is None:
            continue
        stored = sorted(wrapper.grouping_columns)  # the table's key columns, in this order
        position = {c: key_column(stored.index(c)) for c in stored}
        inner = [position[c] for c in s.columns]
        parts.append(
            state.frequencies.select(
                *[F.col(position[c]).alias(n) for c, n in zip(by, segment_names, strict=True)],
                F.lit(s.set_id).alias(SET_ID),
                *[F.col(p).alias(n) for p, n in zip(inner, layout[s.set_id], strict=True)],
                _grouping._any_not_null(inner).alias(_grouping.KEYED),
                F.col(COUNT),
            )
        )
    if not parts:
        return {}, 0
    table = _grouping.union_all(parts)
    try:
        found, actions = _grouping.segmented_frequency_metrics(
            table, sets, layout, by=segment_names, cap=max_segments
        )
    except TooManySegmentsError:
        raise TooManySegmentsError(by, max_segments) from None
    by_segment: SegmentMetrics = {}
    for key, metrics in found.items():
        segment = key[0] if len(by) == 1 else tuple(key)
        by_segment[segment] = {
            a: replace(m, source=MetricSource.STATES) for a, m in metrics.items()
        }
    return by_segment, actions
