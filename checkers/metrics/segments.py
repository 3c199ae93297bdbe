"""Per-segment metrics: every analyzer evaluated for each value of one or more segment columns
("completeness of dep_time for each carrier") in the passes of an unsegmented run, the shared
scan and the frequency query grouping by the segment too. States stay monoids per segment, so the
whole's scan metrics merge from the segments' states in Python.

At most `max_segments` segments (MAX_SEGMENTS unless given): beyond, every metric is an error
that says so, computed in the same job, never a driver out of memory."""

from __future__ import annotations

from collections.abc import Sequence
from functools import reduce

from pyspark.sql import DataFrame, Row
from pyspark.sql import functions as F

from checkers.errors import describe_failure
from checkers.metrics import _grouping
from checkers.metrics._analyzer import Analyzer, FrequencyAnalyzer, ScanShareableAnalyzer, State
from checkers.metrics._capped import TooManySegmentsError
from checkers.metrics._metric import Metric
from checkers.metrics._scan import run_scan

#: The most segments a run computes (each one's metrics reach the driver).
MAX_SEGMENTS = 10_000
SEGMENT = "__dq_segment"

#: A segment's value: the column's value, or a tuple of values for several segment columns.
Segment = object
SegmentMetrics = dict[Segment, dict[Analyzer, Metric]]


def segment_value(found: object) -> Segment:
    return tuple(found) if isinstance(found, Row) else found


def segmented(df: DataFrame, columns: Sequence[str]) -> DataFrame:
    """`df` with the segment of each row in one column (a struct for several columns)."""
    if not columns:
        raise ValueError("segment_by needs at least one column")
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise ValueError(f"segment_by names columns the data lacks: {missing}")
    key = F.col(columns[0]) if len(columns) == 1 else F.struct(*[F.col(c) for c in columns])
    return df.withColumn(SEGMENT, key)


def segment_metrics(
    df: DataFrame,
    analyzers: Sequence[Analyzer],
    columns: Sequence[str],
    *,
    max_segments: int = MAX_SEGMENTS,
    separate_sketches: bool = False,
) -> tuple[SegmentMetrics, dict[Analyzer, Metric], int]:
    """Each segment's metrics, the whole's (scan analyzers only: merged from the segments'
    states), and the Spark actions taken. Analyzers other than scan-shareable and frequency ones
    get an error metric in the whole's (they have no per-segment form)."""
    frame = segmented(df, columns)
    per_segment: SegmentMetrics = {}
    whole: dict[Analyzer, Metric] = {}
    actions = 0
    scan = [a for a in analyzers if isinstance(a, ScanShareableAnalyzer)]
    groups = [[a for a in scan if not a.is_sketch], [a for a in scan if a.is_sketch]]
    for group in groups if separate_sketches else [scan]:
        if not group:
            continue
        try:
            outcome = run_scan(frame, group, by=SEGMENT, cap=max_segments)
        except TooManySegmentsError:
            return {}, _too_many(analyzers, columns, max_segments), actions + 1
        actions += outcome.actions
        whole.update({a: Metric(a, error=e) for a, e in outcome.errors.items()})
        for key, states in outcome.grouped.items():
            found = per_segment.setdefault(segment_value(key), {})
            found.update({a: a.metric_from_state(s) for a, s in states.items()})
        whole.update(_merged(group, outcome.grouped.values(), outcome.errors))
    frequency = [a for a in analyzers if isinstance(a, FrequencyAnalyzer)]
    if frequency:
        try:
            by_key, used = _frequency(frame, frequency, max_segments)
        except TooManySegmentsError:
            return {}, _too_many(analyzers, columns, max_segments), actions + 1
        except Exception as exc:
            by_key, used = {}, 1
            whole.update({a: Metric(a, error=f"{a!r}: {describe_failure(exc)}") for a in frequency})
        actions += used
        for key, metrics in by_key.items():
            per_segment.setdefault(key, {}).update(metrics)
        for analyzer in frequency:
            whole.setdefault(
                analyzer, Metric(analyzer, error=f"{analyzer!r} is computed per segment only")
            )
    for other in analyzers:
        whole.setdefault(other, Metric(other, error=f"{other!r} has no per-segment form"))
    return per_segment, whole, actions


def _too_many(
    analyzers: Sequence[Analyzer], columns: Sequence[str], cap: int
) -> dict[Analyzer, Metric]:
    error = str(TooManySegmentsError(columns, cap))
    return {a: Metric(a, error=error) for a in analyzers}


def _merged(
    group: Sequence[ScanShareableAnalyzer],
    segments: object,
    errors: dict[ScanShareableAnalyzer, str],
) -> dict[Analyzer, Metric]:
    """The whole's metrics of `group`: its states merged over the segments (no Spark job)."""
    parts = list(segments)  # type: ignore[call-overload]
    merged: dict[Analyzer, Metric] = {}
    for analyzer in group:
        if analyzer in errors:
            continue
        states: list[State] = [p[analyzer] for p in parts if analyzer in p]
        state = reduce(lambda a, b: a.merge(b), states) if states else analyzer.zero_state()
        merged[analyzer] = analyzer.metric_from_state(state)
    return merged


def _frequency(
    frame: DataFrame, analyzers: list[FrequencyAnalyzer], cap: int
) -> tuple[SegmentMetrics, int]:
    sets = _grouping.plan_sets(analyzers)
    layout = _grouping.run_layout(frame.schema, sets)
    table = _grouping.frequency_table(frame, sets, layout, by=(SEGMENT,))
    found, actions = _grouping.segmented_frequency_metrics(
        table, sets, layout, by=(SEGMENT,), cap=cap
    )
    return {segment_value(key[0]): metrics for key, metrics in found.items()}, actions
