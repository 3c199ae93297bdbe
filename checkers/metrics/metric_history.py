"""A run's metric history: where its metrics come from and go to (a repository, the run's key and
source), the newest partition it read, and how `has_no_anomalies` judges a metric against the
whole dataset's earlier runs or, per partition, against earlier partitions."""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from checkers.metrics._analyzer import Analyzer
from checkers.metrics._check_core import AnomalySpec
from checkers.metrics._metric import Metric
from checkers.metrics.annotations import Feedback, Period, SeriesPoint, load_periods
from checkers.metrics.repository import SEGMENT_TAG, MetricsRepository, ResultKey
from checkers.metrics.sensitivity import below_floor, tuned

if TYPE_CHECKING:
    from checkers.metrics.time_buckets import TimeBuckets
    from checkers.metrics.verification import VerificationResult


@dataclass(frozen=True)
class PartitionMetrics:
    """The metrics of one partition read in a run (the newest one, for per-partition anomaly
    checks); `partition_ts` is when its data is from, if the partitioning says."""

    partition_id: str
    partition_ts: dt.datetime | None
    metrics: Mapping[Analyzer, Metric]


@dataclass(frozen=True)
class MetricHistory:
    """Where a run's metrics come from and go to: a repository, the run's key and source; with
    `partition`, the newest partition the run read (`has_no_anomalies(per_partition=True)`)."""

    repository: MetricsRepository
    key: ResultKey
    source_table: str
    save: bool = True
    partition: PartitionMetrics | None = None
    #: The QualityCheck whose history this is: the periods people annotated on it apply (set
    #: by the tick, with the check's sensitivity, min_change and maintenance windows).
    check: str | None = None
    sensitivity: str | None = None
    min_change: float | None = None
    excluded_when: Callable[[dt.datetime], str | None] | None = field(default=None, compare=False)
    #: Day-one history of a source with a time column (checkers.metrics.time_buckets)
    training: TimeBuckets | None = None
    #: The segment whose history this is (`for_segment`), else the whole dataset's.
    segment: str | None = None

    def for_segment(self, label: str) -> MetricHistory:
        """This history for one segment (`carrier=UA`): its metrics are saved under the
        segment's tag, and its anomaly constraints judge against that segment's runs only."""
        tags = {**self.key.tags, SEGMENT_TAG: label}
        key = ResultKey(self.key.dataset_time, tags)
        return dataclasses.replace(self, key=key, segment=label, training=None)

    def series_tags(self, tags: Mapping[str, str] | None) -> Mapping[str, str] | None:
        """The tags a history query asks for: a constraint's own, and this history's segment."""
        if self.segment is None:
            return tags
        return {**(tags or {}), SEGMENT_TAG: self.segment}

    def feedback(self) -> Feedback:
        """The check's annotated periods and maintenance windows, read now."""
        periods: tuple[Period, ...] = ()
        if self.check is not None:
            with self.repository.engine.connect() as connection:
                periods = load_periods(connection, self.check)
        return Feedback(periods, self.excluded_when)

    def record(self, result: VerificationResult) -> None:
        """Save the whole dataset's metrics and constraint statuses. Verdicts of per-partition
        anomaly constraints go on the newest partition's rows instead (saved again, the latest
        save of a partition wins), so a flagged partition leaves later partitions' history."""
        self.repository.save(self.key, result, source_table=self.source_table)
        judged = {
            c.constraint.analyzer
            for check in result.check_results
            for c in check.constraint_results
            if isinstance(c.constraint.anomaly, AnomalySpec) and c.constraint.anomaly.per_partition
        }
        if self.partition is None or not judged:
            return
        metrics = {a: m for a, m in self.partition.metrics.items() if a in judged}
        self.repository.save(
            self._partition_key(self.partition.partition_ts),
            dataclasses.replace(result, metrics=metrics),
            source_table=self.source_table,
            partition_id=self.partition.partition_id,
            partition_ts=self.partition.partition_ts,
        )

    def record_partition(
        self, partition_id: str, partition_ts: dt.datetime | None, metrics: Iterable[Metric]
    ) -> int:
        """Save one partition's metrics (its dataset time is `partition_ts`, else the run's);
        returns how many rows were written."""
        return self.repository.save(
            self._partition_key(partition_ts),
            metrics,
            source_table=self.source_table,
            partition_id=partition_id,
            partition_ts=partition_ts,
        )

    def with_partition(
        self,
        partition_id: str,
        partition_ts: dt.datetime | None,
        metrics: Mapping[Analyzer, Metric],
    ) -> MetricHistory:
        """This history, judging per-partition anomalies on `metrics` of `partition_id`."""
        partition = PartitionMetrics(partition_id, partition_ts, dict(metrics))
        return dataclasses.replace(self, partition=partition)

    def _partition_key(self, partition_ts: dt.datetime | None) -> ResultKey:
        return ResultKey(partition_ts or self.key.dataset_time, self.key.tags)


def judge_anomaly(
    analyzer: Analyzer, metric: Metric, spec: AnomalySpec, history: MetricHistory
) -> tuple[str | None, str | None]:
    """(reason the metric is anomalous, note) against the whole dataset's earlier runs or, with
    `spec.per_partition`, the earlier partitions; `metric` is the newest partition's then."""
    if not spec.per_partition:
        points = history.repository.annotated_series(
            analyzer,
            source_table=history.source_table,
            before=history.key.dataset_time,
            tags=history.series_tags(spec.tags),
        )
        judged = Judged(history.key.dataset_time, "earlier runs", "value")
        return _compare(metric, spec, points, judged, history)
    partition = history.partition
    if partition is None:
        return None, "not judged: no new partition was read in this run"
    judged_at = partition.partition_ts or history.key.dataset_time
    points = history.repository.annotated_series(
        analyzer,
        source_table=history.source_table,
        before=judged_at,
        tags=history.series_tags(spec.tags),
        per_partition=True,
        exclude_partition=partition.partition_id,
    )
    label = f"partition {partition.partition_id}:"
    judged = Judged(judged_at, "earlier partitions", f"{label} value", label)
    return _compare(metric, spec, points, judged, history)


@dataclass(frozen=True)
class Judged:
    """The point being judged: its time, and how the verdict names it and its history."""

    at: dt.datetime
    earlier_label: str
    value_label: str
    note_label: str = ""


def partition_metric(
    analyzer: Analyzer, spec: AnomalySpec, history: MetricHistory | None
) -> Metric | None:
    """The metric a per-partition anomaly constraint judges: the newest partition's (an error
    metric when the partition lacks it); None when the whole dataset's metric is the one."""
    if not spec.per_partition or history is None or history.partition is None:
        return None
    partition = history.partition
    found = partition.metrics.get(analyzer)
    if found is None:
        return Metric(analyzer, error=f"partition {partition.partition_id} has no {analyzer!r}")
    return found


def _compare(
    metric: Metric,
    spec: AnomalySpec,
    points: Sequence[SeriesPoint],
    judged: Judged,
    history: MetricHistory,
) -> tuple[str | None, str | None]:
    if not isinstance(metric.value, int | float):
        return "anomaly detection needs a numeric metric", None
    judging = Judging(
        spec.sensitivity or history.sensitivity,
        spec.min_change if spec.min_change is not None else history.min_change,
        history.feedback(),
    )
    return judge_value(float(metric.value), points, judged, spec, judging)


@dataclass(frozen=True)
class Judging:
    """How a check judges its anomalies: its sensitivity, its floor, what people said."""

    sensitivity: str | None = None
    min_change: float | None = None
    feedback: Feedback = field(default_factory=Feedback)


def judge_value(
    value: float,
    points: Sequence[SeriesPoint],
    judged: Judged,
    spec: AnomalySpec,
    judging: Judging,
) -> tuple[str | None, str | None]:
    """(reason `value` at `judged.at` is anomalous, note) against `points` (earlier ones)."""
    prefix = f"{judged.note_label} " if judged.note_label else ""
    strategy = tuned(spec.strategy, judging.sensitivity)
    # the one place people's annotations and maintenance windows shape what a strategy sees
    training = judging.feedback.training(
        points,
        judged.at,
        exclude_failed=spec.exclude_failed,
        keeps_positions=getattr(strategy, "keeps_positions", False),
    )
    if training.skip_reason:
        return None, f"{prefix}{training.skip_reason}"
    earlier, expected = training.history, training.expected
    series = [*earlier, value]
    try:
        flagged = strategy.detect(series, len(earlier))  # type: ignore[arg-type]
        low, high = strategy.bounds(series, len(earlier))  # type: ignore[arg-type]
    except ValueError as exc:  # not enough history for this strategy
        return None, f"{prefix}not judged: {exc}"
    runs = sum(1 for v in earlier if v is not None)
    bounds = f"[{low:.6g}, {high:.6g}] from {runs} {judged.earlier_label}"
    if flagged and expected and min(low, *expected) <= value <= max(high, *expected):
        # a person said values out to these are expected: the accepted range stretches to them
        low, high = min(low, *expected), max(high, *expected)
        widened = f"[{low:.6g}, {high:.6g}] with {len(expected)} value(s) marked expected"
        return None, f"{prefix}within {widened}"
    min_change = judging.min_change
    if flagged and below_floor(value, earlier, min_change):
        return None, f"{prefix}outside {bounds}, but changed less than min_change={min_change:g}"
    if flagged:
        shown = int(value) if value.is_integer() else value
        return f"{judged.value_label} {shown!r} is anomalous: outside {bounds}", None
    return None, f"{prefix}within {bounds}"
