"""Day-one history for a source with a time column: an anomaly constraint whose history is
shorter than its training window gets, on that run, its metric per time bucket (day or hour) over
the window, computed in one grouped pass (`analyze_partitions` grouped by the bucket) and saved as
the history earlier runs would have left. Buckets already in the history keep their points."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from checkers.metrics._analyzer import Analyzer
from checkers.metrics._metric import Metric
from checkers.metrics.annotations import SeriesPoint
from checkers.metrics.differential import metrics_from_states
from checkers.metrics.partitioned import analyze_partitions
from checkers.metrics.repository import ResultKey

if TYPE_CHECKING:
    from checkers.metrics.metric_history import MetricHistory

BUCKET_COLUMN = "__dq_time_bucket"
SECONDS = {"day": 86_400, "hour": 3_600}


@dataclass(frozen=True)
class TimeBuckets:
    """Train on `frame` (the whole source, not the slice a run judges) bucketed by its timestamp
    `column`: the `count` buckets (`every` day or hour, UTC) before the judged time."""

    frame: DataFrame = field(compare=False, repr=False)
    column: str
    count: int = 28
    every: str = "day"

    def __post_init__(self) -> None:
        if self.every not in SECONDS:
            raise ValueError(f"TimeBuckets(every=...) is 'day' or 'hour', got {self.every!r}")
        if self.count < 2:
            raise ValueError("TimeBuckets needs count >= 2 buckets of history")

    def starts(self, judged_at: dt.datetime) -> list[dt.datetime]:
        """The buckets' start times, oldest first, ending where the judged bucket starts."""
        size = SECONDS[self.every]
        start = int(judged_at.timestamp()) // size * size
        return [
            dt.datetime.fromtimestamp(start - k * size, dt.UTC) for k in range(self.count, 0, -1)
        ]


def fill_history(history: MetricHistory, analyzers: Sequence[Analyzer]) -> int:
    """Save, for each bucket before the judged time that the history of `analyzers` lacks, the
    metrics of its rows (one grouped pass over the training frame for all of them); returns how
    many buckets were saved. Nothing runs when every bucket has its point."""
    if not history.save:
        return 0
    found = bucket_metrics(history, analyzers)
    for start, metrics in found.items():
        history.repository.save(
            ResultKey(start, history.key.tags), metrics.values(), source_table=history.source_table
        )
    return len(found)


def bucket_points(history: MetricHistory, analyzer: Analyzer) -> list[SeriesPoint]:
    """The points of `analyzer` for the buckets its history lacks, computed but not saved (what
    `dq backtest` replays with the stored history: the check's first run would save them)."""
    found = bucket_metrics(history, [analyzer])
    points = []
    for start, metrics in found.items():
        metric = metrics.get(analyzer)
        if metric is not None and metric.ok and isinstance(metric.value, int | float):
            points.append(SeriesPoint(start, float(metric.value)))
    return points


def bucket_metrics(
    history: MetricHistory, analyzers: Sequence[Analyzer]
) -> dict[dt.datetime, dict[Analyzer, Metric]]:
    """The metrics of `analyzers` per training bucket the history lacks (one grouped pass over
    the training frame), by bucket start; empty when every bucket has its point."""
    buckets = history.training
    if buckets is None or not analyzers:
        return {}
    missing = _missing_starts(history, buckets, analyzers)
    if not missing:
        return {}
    size = SECONDS[buckets.every]
    keys = {str(int(s.timestamp()) // size): s for s in missing}
    frame = buckets.frame.withColumn(
        BUCKET_COLUMN,
        (F.floor(F.unix_timestamp(F.col(buckets.column)) / F.lit(size)))
        .cast("long")
        .cast("string"),
    ).where(F.col(BUCKET_COLUMN).isin(list(keys)))
    found = analyze_partitions(frame, list(analyzers), list(keys), column=BUCKET_COLUMN)
    result = {}
    for key, start in keys.items():
        states = found.states[key]
        metrics, _ = metrics_from_states([a for a in analyzers if a in states], [states])
        result[start] = dict(metrics)
    return result


def _missing_starts(
    history: MetricHistory, buckets: TimeBuckets, analyzers: Sequence[Analyzer]
) -> list[dt.datetime]:
    """The bucket starts before the judged time some of `analyzers` has no point at."""
    starts = buckets.starts(history.key.dataset_time)
    known = set(starts)
    for analyzer in analyzers:
        points = history.repository.series(
            analyzer,
            source_table=history.source_table,
            before=history.key.dataset_time,
            tags=history.key.tags,
        )
        known &= {time for time, _, _ in points}
    return [s for s in starts if s not in known]
