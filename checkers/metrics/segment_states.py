"""States per segment that a partition keeps: `PerSegment(analyzer, by)` holds one state of
`analyzer` for each value of the segment columns `by`, a monoid merged segment by segment. An
incremental segmented check stores one per partition, computed in its grouped pass (rows grouped
by partition and segment), and merges them over partitions as it merges any state.

Segment values are stored as JSON with their type (dates, timestamps, decimals, tuples of several
columns), so a merged segment is the same Python value a from-scratch run groups by."""

from __future__ import annotations

import base64
import datetime as dt
import decimal
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import reduce
from typing import TYPE_CHECKING, Any, ClassVar

from pyspark.sql import DataFrame, Row
from pyspark.sql import functions as F
from pyspark.sql.types import StructType

from checkers.metrics._analyzer import Analyzer, ScanShareableAnalyzer, State
from checkers.metrics._capped import TooManySegmentsError
from checkers.metrics._metric import Entity, Metric, MetricSource, MetricValue
from checkers.metrics._scan import run_scan
from checkers.metrics._serde import decode_state, encode_state, state_kind
from checkers.metrics.segments import SEGMENT, Segment, SegmentMetrics, segment_value, segmented

if TYPE_CHECKING:
    from checkers.metrics.partitioned import PartitionedAnalysis

__all__ = [
    "PerSegment",
    "SegmentStates",
    "TooManySegmentsError",
    "merged_segment_metrics",
    "partition_segment_states",
    "whole_of",
]

#: The column a partitioned pass groups by: the row's partition and segment, as one struct.
PARTITION_SEGMENT = "__dq_partition_segment"


@state_kind("segments")
@dataclass(frozen=True)
class SegmentStates:
    """One state per segment (a segment without rows is absent)."""

    states: Mapping[Segment, State] = field(default_factory=dict)

    def merge(self, other: SegmentStates) -> SegmentStates:
        merged = dict(self.states)
        for segment, state in other.states.items():
            merged[segment] = merged[segment].merge(state) if segment in merged else state
        return SegmentStates(merged)

    def to_payload(self) -> dict[str, Any]:
        return {
            "segments": [[encode_segment(s), encode_state(st)] for s, st in self.states.items()]
        }

    @classmethod
    def from_payload(cls, payload: Mapping[str, Any]) -> SegmentStates:
        return cls(
            {decode_segment(s): decode_state(st) for s, st in payload["segments"]}  # type: ignore[misc]
        )


@dataclass(frozen=True, repr=False)
class PerSegment(Analyzer):
    """`analyzer`'s state for each segment of the columns `by`."""

    analyzer: ScanShareableAnalyzer
    by: tuple[str, ...]
    entity_kind: ClassVar[Entity] = Entity.DATASET

    @property
    def columns(self) -> tuple[str, ...]:
        return (*self.by, *self.analyzer.columns)

    def schema_error(self, schema: StructType) -> str | None:
        missing = [c for c in self.by if c not in schema.fieldNames()]
        if missing:
            return f"{self!r}: segment columns the data lacks: {missing}"
        return self.analyzer.schema_error(schema)

    def zero_state(self) -> SegmentStates:
        return SegmentStates()

    def metrics(self, state: SegmentStates) -> dict[Segment, Metric]:
        """Each segment's metric of the inner analyzer."""
        return {s: self.analyzer.metric_from_state(st) for s, st in state.states.items()}

    def compute_value(self, state: SegmentStates) -> MetricValue:  # type: ignore[override]
        # Comparable values (a stored partition against its recomputation): by segment.
        return {
            json.dumps(encode_segment(s)): m.value if m.ok else m.error
            for s, m in self.metrics(state).items()
        }

    def __repr__(self) -> str:
        return f"PerSegment({self.analyzer!r}, by={list(self.by)!r})"


def partition_segment_states(
    df: DataFrame,
    analyzers: Sequence[PerSegment],
    found: PartitionedAnalysis,
    *,
    column: str,
    passes: Sequence[Sequence[ScanShareableAnalyzer]],
    max_segments: int,
) -> None:
    """Adds to `found` the states of `analyzers` in each of its partitions (the string `column`
    of `df`; empty states where a partition has no rows), their errors and the Spark actions
    taken, from one
    aggregation grouped by partition and segment per scan pass in `passes` (which group the
    inner analyzers) and per segment columns. At most `max_segments` segments per partition
    read (an error for every such analyzer beyond, decided in the same job)."""
    partitions = list(found.states)
    for by in dict.fromkeys(a.by for a in analyzers):
        mine = {a.analyzer: a for a in analyzers if a.by == by}
        frame = segmented(df, by)
        frame = frame.withColumn(
            PARTITION_SEGMENT, F.struct(F.col(column).alias("p"), F.col(SEGMENT).alias("s"))
        )
        for group in passes:
            inner = [a for a in group if a in mine]
            if not inner:
                continue
            try:
                outcome = run_scan(
                    frame, inner, by=PARTITION_SEGMENT, cap=max_segments * max(len(partitions), 1)
                )
            except TooManySegmentsError:
                error = str(TooManySegmentsError(by, max_segments))
                found.errors.update(dict.fromkeys((mine[a] for a in inner), error))
                found.spark_actions += 1
                continue
            found.spark_actions += outcome.actions
            found.errors.update({mine[a]: e for a, e in outcome.errors.items()})
            per_partition: dict[str, dict[Analyzer, dict[Segment, State]]] = {}
            for key, states in outcome.grouped.items():
                assert isinstance(key, Row)
                target = per_partition.setdefault(key[0], {})
                for analyzer, state in states.items():
                    target.setdefault(analyzer, {})[segment_value(key[1])] = state
            for partition, kept in found.states.items():
                got = per_partition.get(partition, {})
                for analyzer in inner:
                    if analyzer not in outcome.errors:
                        kept[mine[analyzer]] = SegmentStates(got.get(analyzer, {}))


def whole_of(segments: SegmentStates, analyzer: ScanShareableAnalyzer) -> State:
    """The state over every segment: the segments' states merged (no Spark job)."""
    return reduce(lambda a, b: a.merge(b), segments.states.values(), analyzer.zero_state())


def encode_segment(value: object) -> object:
    """A segment value as JSON that `decode_segment` turns back into the same value and type."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, tuple):
        return {"tuple": [encode_segment(v) for v in value]}
    if isinstance(value, dt.datetime):
        return {"datetime": value.isoformat()}
    if isinstance(value, dt.date):
        return {"date": value.isoformat()}
    if isinstance(value, decimal.Decimal):
        return {"decimal": str(value)}
    if isinstance(value, (bytes, bytearray)):
        return {"b64": base64.b64encode(value).decode("ascii")}
    raise TypeError(f"a segment value of type {type(value).__name__} cannot be stored")


def decode_segment(encoded: object) -> Segment:
    if not isinstance(encoded, dict):
        return encoded
    ((kind, text),) = encoded.items()
    if kind == "tuple":
        return tuple(decode_segment(v) for v in text)
    if kind == "datetime":
        return dt.datetime.fromisoformat(text)
    if kind == "date":
        return dt.date.fromisoformat(text)
    if kind == "decimal":
        return decimal.Decimal(text)
    if kind == "b64":
        return base64.b64decode(text)
    raise ValueError(f"unknown segment encoding {kind!r}")


def merged_segment_metrics(
    analyzers: Sequence[PerSegment], merged: Mapping[Analyzer, State], *, max_segments: int
) -> SegmentMetrics:
    """Each segment's metrics of the inner analyzers, from `analyzers`' states merged over
    partitions (no Spark job); TooManySegmentsError beyond `max_segments` segments."""
    by_segment: SegmentMetrics = {}
    for analyzer in analyzers:
        state = merged.get(analyzer, analyzer.zero_state())
        for segment, metric in analyzer.metrics(state).items():  # type: ignore[arg-type]
            found = by_segment.setdefault(segment, {})
            found[analyzer.analyzer] = replace(metric, source=MetricSource.STATES)
    if len(by_segment) > max_segments:
        raise TooManySegmentsError(analyzers[0].by, max_segments)
    return by_segment
