"""`VerificationSuite`: the analyzers of all checks deduplicated and computed in one engine run,
then every constraint evaluated in Python. The result says the overall status, each check's
status, and each constraint's metric, value and reason for failing; it exports to JSON, pandas and
Spark, prints a report, and gives row-level results."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from checkers.metrics._analyzer import Analyzer
from checkers.metrics._metric import Metric
from checkers.metrics.check import AnomalySpec, Check, CheckLevel
from checkers.metrics.constraints import ConstraintStatus, MetricConstraint
from checkers.metrics.metric_history import (
    MetricHistory,
    PartitionMetrics,
    judge_anomaly,
    partition_metric,
)
from checkers.metrics.repository import MetricsRepository, ResultKey
from checkers.metrics.runner import run_analysis

__all__ = [
    "CheckResult",
    "CheckStatus",
    "ConstraintResult",
    "MetricHistory",
    "PartitionMetrics",
    "VerificationResult",
    "VerificationSuite",
    "evaluate_check",
    "judge",
    "worst_status",
]


class CheckStatus(StrEnum):
    SUCCESS = "Success"
    WARNING = "Warning"
    ERROR = "Error"

    @property
    def rank(self) -> int:
        return [CheckStatus.SUCCESS, CheckStatus.WARNING, CheckStatus.ERROR].index(self)


@dataclass(frozen=True)
class ConstraintResult:
    constraint: MetricConstraint
    status: ConstraintStatus
    metric: Metric
    value: object
    message: str | None


@dataclass(frozen=True)
class CheckResult:
    check: Check
    status: CheckStatus
    constraint_results: tuple[ConstraintResult, ...]


def _json_value(value: object) -> object:
    try:
        json.dumps(value)
        return value
    except TypeError:
        return str(value)


@dataclass
class VerificationResult:
    status: CheckStatus
    check_results: list[CheckResult]
    metrics: dict[Analyzer, Metric] = field(default_factory=dict)
    spark_actions: int = 0

    def records(self) -> list[dict[str, object]]:
        """One row per constraint, as Deequ's `checkResultsAsDataFrame` plus the metric."""
        return [
            {
                "check": r.check.description,
                "check_level": r.check.level.value,
                "check_status": r.status.value,
                "constraint": c.constraint.name,
                "constraint_status": c.status.value,
                "constraint_message": c.message or "",
                "metric": c.metric.name,
                "instance": c.metric.instance,
                "value": _json_value(c.value),
            }
            for r in self.check_results
            for c in r.constraint_results
        ]

    def success_metrics(self) -> list[dict[str, object]]:
        """Every computed metric: entity, instance, name, value."""
        return [
            {
                "entity": m.entity.value,
                "instance": m.instance,
                "name": m.name,
                "value": _json_value(m.value),
            }
            for m in self.metrics.values()
            if m.ok
        ]

    def to_json(self) -> str:
        return json.dumps(
            {"status": self.status.value, "constraints": self.records()},
            sort_keys=True,
            default=str,
        )

    def to_pandas(self):
        import pandas as pd

        return pd.DataFrame(self.records())

    def to_spark(self, spark: SparkSession) -> DataFrame:
        rows = [{**r, "value": json.dumps(r["value"], default=str)} for r in self.records()]
        schema = (
            "check string, check_level string, check_status string, constraint string, "
            "constraint_status string, constraint_message string, metric string, "
            "instance string, value string"
        )
        return spark.createDataFrame([tuple(r.values()) for r in rows], schema)

    def report(self) -> str:
        """A readable verdict, one line per constraint (Listing 2 of the Deequ paper)."""
        lines = [f"Verification {self.status.value}"]
        for r in self.check_results:
            lines.append(f"{r.check.level.value} check '{r.check.description}': {r.status.value}")
            for c in r.constraint_results:
                ok = "ok" + (f", {c.message}" if c.message else "")
                verdict = ok if c.status is ConstraintStatus.SUCCESS else c.message
                lines.append(f"  {c.constraint.name}: {verdict} (value {c.value!r})")
        return "\n".join(lines)

    def row_level_results(self, data: DataFrame) -> DataFrame:
        """`data` plus one boolean column per check (named by its description): TRUE where the
        row satisfies all of the check's constraints that have a row meaning (completeness, the
        compliance family, patterns, min/max and lengths, the uniqueness family). NULL rules:
        completeness and compliance treat NULL as failing, except where the constraint lets NULL
        pass (non-negative, positive, contained in, in range); min/max and lengths do not judge
        NULL values; uniqueness does not judge rows whose key is all NULL; rows a `where`
        excludes are TRUE. Checks without such constraints add no column."""
        columns = {}
        for r in self.check_results:
            parts = [c.row_condition() for c in r.check.constraints if c.row_condition]
            if not parts:
                continue
            combined = parts[0]
            for part in parts[1:]:
                combined = combined & part
            columns[r.check.description] = F.coalesce(combined, F.lit(False))
        return data.withColumns(columns) if columns else data


class VerificationSuite:
    """`VerificationSuite(df).add_check(check).run()`."""

    def __init__(self, data: DataFrame) -> None:
        self.data = data
        self._checks: list[Check] = []
        self._required: list[Analyzer] = []

    def add_check(self, check: Check) -> VerificationSuite:
        self._checks.append(check)
        return self

    def add_checks(self, checks: Sequence[Check]) -> VerificationSuite:
        self._checks.extend(checks)
        return self

    def add_required_analyzer(self, analyzer: Analyzer) -> VerificationSuite:
        """Compute this analyzer too (its metric lands in the result, for the history)."""
        self._required.append(analyzer)
        return self

    def use_repository(
        self,
        repository: MetricsRepository,
        key: ResultKey,
        *,
        source_table: str,
        save: bool = True,
        partition: PartitionMetrics | None = None,
    ) -> VerificationSuite:
        """Read anomaly histories from `repository` and (with `save`) store this run's metrics
        and constraint statuses under `key`; `partition` is the newest partition's metrics,
        for `has_no_anomalies(per_partition=True)`."""
        self._history = MetricHistory(repository, key, source_table, save, partition)
        return self

    _history: MetricHistory | None = None

    def run(self, **engine_options: object) -> VerificationResult:
        analyzers = [c.analyzer for check in self._checks for c in check.constraints]
        analysis = run_analysis(self.data, [*analyzers, *self._required], **engine_options)  # type: ignore[arg-type]
        results = [evaluate_check(check, analysis.metrics, self._history) for check in self._checks]
        result = VerificationResult(
            worst_status(results), results, dict(analysis.metrics), analysis.spark_actions
        )
        if self._history is not None and self._history.save:
            self._history.record(result)
        return result


def worst_status(results: Sequence[CheckResult]) -> CheckStatus:
    return max((r.status for r in results), key=lambda s: s.rank, default=CheckStatus.SUCCESS)


def judge(
    constraint: MetricConstraint, metric: Metric, history: MetricHistory | None
) -> tuple[str | None, str | None]:
    """(reason the constraint fails, note) for one constraint; anomaly constraints compare the
    metric with its history."""
    if constraint.anomaly is None or not metric.ok:
        return constraint.evaluate(metric), None
    if history is None:
        return (
            "has_no_anomalies needs a metrics repository (VerificationSuite.use_repository)",
            None,
        )
    spec: AnomalySpec = constraint.anomaly  # type: ignore[assignment]
    return judge_anomaly(constraint.analyzer, metric, spec, history)


def evaluate_check(
    check: Check, metrics: Mapping[Analyzer, Metric], history: MetricHistory | None = None
) -> CheckResult:
    """Every constraint of `check` on computed metrics."""
    outcomes = []
    for constraint in check.constraints:
        metric = metrics[constraint.analyzer]
        if isinstance(constraint.anomaly, AnomalySpec):  # per partition: the newest one's metric
            metric = partition_metric(constraint.analyzer, constraint.anomaly, history) or metric
        reason, note = judge(constraint, metric, history)
        try:
            value = constraint.value(metric) if metric.ok else None
        except Exception:
            value = None
        status = ConstraintStatus.SUCCESS if reason is None else ConstraintStatus.FAILURE
        outcomes.append(ConstraintResult(constraint, status, metric, value, reason or note))
    failed = any(o.status is ConstraintStatus.FAILURE for o in outcomes)
    level = CheckStatus.ERROR if check.level is CheckLevel.ERROR else CheckStatus.WARNING
    return CheckResult(check, level if failed else CheckStatus.SUCCESS, tuple(outcomes))
