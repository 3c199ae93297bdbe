"""`VerificationSuite`: the analyzers of all checks deduplicated and computed in one engine run,
then every constraint evaluated in Python. The result says the overall status, each check's
status, and each constraint's metric, value and reason for failing; it exports to JSON, pandas and
Spark, prints a report, and gives row-level results."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from checkers.metrics._analyzer import Analyzer
from checkers.metrics._metric import Metric
from checkers.metrics.check import AnomalySpec, Check, CheckLevel
from checkers.metrics.constraints import ConstraintStatus, MetricConstraint
from checkers.metrics.repository import MetricsRepository, ResultKey
from checkers.metrics.runner import run_analysis


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

    def to_pandas(self):  # type: ignore[no-untyped-def]
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
    ) -> VerificationSuite:
        """Read anomaly histories from `repository` and (with `save`) store this run's metrics
        and constraint statuses under `key`."""
        self._repository = (repository, key, source_table, save)
        return self

    _repository: tuple[MetricsRepository, ResultKey, str, bool] | None = None

    def run(self, **engine_options: object) -> VerificationResult:
        analyzers = [c.analyzer for check in self._checks for c in check.constraints]
        analysis = run_analysis(self.data, [*analyzers, *self._required], **engine_options)  # type: ignore[arg-type]
        results = [self._evaluate(check, analysis.metrics) for check in self._checks]
        worst = max((r.status for r in results), key=lambda s: s.rank, default=CheckStatus.SUCCESS)
        result = VerificationResult(worst, results, dict(analysis.metrics), analysis.spark_actions)
        if self._repository is not None and self._repository[3]:
            repository, key, source, _ = self._repository
            repository.save(key, result, source_table=source)
        return result

    def _judge(self, constraint: MetricConstraint, metric: Metric) -> tuple[str | None, str | None]:
        """(reason it fails, note) for one constraint."""
        if constraint.anomaly is None or not metric.ok:
            return constraint.evaluate(metric), None
        if self._repository is None:
            return "has_no_anomalies needs VerificationSuite.use_repository(...)", None
        spec: AnomalySpec = constraint.anomaly  # type: ignore[assignment]
        repository, key, source, _ = self._repository
        points = repository.series(
            constraint.analyzer, source_table=source, before=key.dataset_time, tags=spec.tags
        )
        if not isinstance(metric.value, int | float):
            return "anomaly detection needs a numeric metric", None
        strategy = spec.strategy
        history: list[float | None]
        if getattr(strategy, "keeps_positions", False):
            # seasonal strategies need the calendar: excluded runs become gaps, not removals
            history = [None if spec.exclude_failed and failed else v for _, v, failed in points]
        else:
            history = [v for _, v, failed in points if not (spec.exclude_failed and failed)]
        series = [*history, float(metric.value)]
        try:
            flagged = strategy.detect(series, len(history))  # type: ignore[arg-type]
            low, high = strategy.bounds(series, len(history))  # type: ignore[arg-type]
        except ValueError as exc:  # not enough history for this strategy
            return None, f"not judged: {exc}"
        earlier = sum(1 for v in history if v is not None)
        bounds = f"[{low:.6g}, {high:.6g}] from {earlier} earlier runs"
        if flagged:
            return f"value {metric.value!r} is anomalous: outside {bounds}", None
        return None, f"within {bounds}"

    def _evaluate(self, check: Check, metrics: dict[Analyzer, Metric]) -> CheckResult:
        outcomes = []
        for constraint in check.constraints:
            metric = metrics[constraint.analyzer]
            reason, note = self._judge(constraint, metric)
            try:
                value = constraint.value(metric) if metric.ok else None
            except Exception:
                value = None
            status = ConstraintStatus.SUCCESS if reason is None else ConstraintStatus.FAILURE
            outcomes.append(ConstraintResult(constraint, status, metric, value, reason or note))
        failed = any(o.status is ConstraintStatus.FAILURE for o in outcomes)
        level = CheckStatus.ERROR if check.level is CheckLevel.ERROR else CheckStatus.WARNING
        return CheckResult(check, level if failed else CheckStatus.SUCCESS, tuple(outcomes))
