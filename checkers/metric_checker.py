"""`MetricChecker`: Deequ-style constraints on metrics of one dataset. Each constraint is an
element: it fails when its assertion rejects the metric or the metric cannot be computed."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol

from pyspark.sql import DataFrame

from checkers.checker import Checker, CheckerPlan, CheckerResult
from checkers.metrics import (
    Analyzer,
    FrequencyAnalyzer,
    Metric,
    ScanShareableAnalyzer,
    Size,
)
from checkers.metrics.check import Check, CheckLevel
from checkers.metrics.constraints import ConstraintStatus, MetricConstraint
from checkers.metrics.partitioned import has_partition_states
from checkers.metrics.segments import MAX_SEGMENTS
from checkers.metrics.time_buckets import fill_history
from checkers.metrics.verification import (
    MetricHistory,
    VerificationResult,
    evaluate_check,
    worst_status,
)
from checkers.outcome import json_safe
from checkers.segment_checking import judge_segments, stored_segments
from checkers.tolerances import KnownBroken

__all__ = ["ConstraintSource", "MetricChecker", "MetricConstraint", "MetricHistory"]


class ConstraintSource(Protocol):
    """Anything holding constraints (a Deequ-style `Check`)."""

    @property
    def constraints(self) -> Sequence[MetricConstraint]: ...


class MetricChecker(Checker):
    """Metric constraints over `dataset`, all computed in one engine run. Failing elements are the
    constraints that do not hold; the sample lists them with their values and reasons. A constraint
    on a column the dataset lacks makes the whole checker an error, not a failure.

    With `history`, `has_no_anomalies` constraints compare their metric with the repository's
    history, and the run's metrics and statuses are saved there (unless `history.save` is off).

    With `segment_by` (columns), every constraint is judged for each segment (each value of
    those columns) instead of the whole; failing elements are (segment, constraint) pairs. At
    most `max_segments` segments: beyond, the checker is an error. Each segment has its own
    history: `has_no_anomalies` judges a segment against that segment's earlier runs.
    """

    def __init__(
        self,
        dataset: DataFrame,
        constraints: Sequence[MetricConstraint | ConstraintSource],
        *,
        history: MetricHistory | None = None,
        segment_by: Sequence[str] = (),
        max_segments: int = MAX_SEGMENTS,
    ) -> None:
        checks: list[Check] = []
        loose = Check(CheckLevel.ERROR, "constraints")
        for item in constraints:
            if isinstance(item, Check):
                checks.append(item)
            else:
                for constraint in (
                    [item] if isinstance(item, MetricConstraint) else item.constraints
                ):
                    loose._constraints.append(constraint)
        if loose.constraints:
            checks.append(loose)
        if not any(c.constraints for c in checks):
            raise ValueError("MetricChecker needs at least one constraint")
        self.dataset = dataset
        self.checks = tuple(checks)
        self.constraints = tuple(c for check in checks for c in check.constraints)
        self.history = history
        self.segment_by = tuple(segment_by)
        self.max_segments = max_segments
        if missing := [c for c in self.segment_by if c not in dataset.columns]:
            raise ValueError(f"segment_by names columns the data lacks: {missing}")

    def incremental_problem(self, partition_columns: Sequence[str]) -> str | None:
        kept = (ScanShareableAnalyzer, FrequencyAnalyzer)  # the states kept per segment
        apart = [c.analyzer for c in self.constraints if not isinstance(c.analyzer, kept)]
        if self.segment_by and apart:
            return (
                f"{apart[0]!r} keeps no state per partition and segment (only counts, "
                "moments, extremes, sketches and frequency tables do): check it in a check "
                "of its own, or drop segment_by"
            )
        whole = [c.analyzer for c in self.constraints if not has_partition_states(c.analyzer)]
        if whole:
            return (
                f"{whole[0]!r} reads the dataset as a whole and keeps no state per partition: "
                "drop incremental, or check it in a check of its own"
            )
        return None  # every other analyzer's state is a monoid: partitions merge

    def _whole_dataset_anomalies(self) -> list[Analyzer]:
        """Analyzers of anomaly constraints judged against earlier runs (not per partition)."""
        return list(
            dict.fromkeys(
                c.analyzer
                for c in self.constraints
                if c.anomaly is not None and not getattr(c.anomaly, "per_partition", False)
            )
        )

    def plan(self, excused: Sequence[KnownBroken] = ()) -> CheckerPlan:
        if excused:
            raise ValueError("KnownBroken keys do not apply to metric constraints")
        if self.segment_by:
            return segmented_plan(self)
        frame = self.dataset
        schema = frame.schema
        size = Size()
        # this checker's own analyzers: a shared engine pass computes other checkers' metrics too
        analyzers = list(dict.fromkeys([size, *(c.analyzer for c in self.constraints)]))

        def finish(metrics: Mapping[Analyzer, Metric]) -> CheckerResult:
            for constraint in self.constraints:
                problem = constraint.analyzer.schema_error(schema)
                if problem is not None:
                    return CheckerResult.failed_to_run(problem)
            if self.history is not None and self.history.training is not None:
                fill_history(self.history, self._whole_dataset_anomalies())
            results = [evaluate_check(c, metrics, self.history) for c in self.checks]
            if self.history is not None and self.history.save:
                own = {a: metrics[a] for a in analyzers}
                self.history.record(VerificationResult(worst_status(results), results, own))
            failed, values, agreements, sources = [], {}, {}, {}
            for outcome in (o for r in results for o in r.constraint_results):
                label = outcome.constraint.name
                values[label] = json_safe(outcome.value)
                if outcome.metric is not None:
                    sources[label] = outcome.metric.source.value
                    if outcome.metric.agreement is not None:
                        agreements[label] = outcome.metric.agreement
                if outcome.status is ConstraintStatus.FAILURE:
                    failed.append(
                        {
                            "constraint": label,
                            "metric": outcome.metric.name,
                            "instance": outcome.metric.instance,
                            "value": json_safe(outcome.value),
                            "reason": outcome.message,
                        }
                    )
            rows = metrics[size]
            return CheckerResult(
                failing=len(failed),
                total=len(self.constraints),
                unexcused=len(failed),
                rows=int(rows.value) if rows.ok else None,  # type: ignore[arg-type]
                metrics=values,
                agreements=agreements,
                metric_sources=sources,
                fetch_sample=lambda limit: failed[:limit],
            )

        return CheckerPlan(frame, analyzers, finish)


def segmented_plan(checker: MetricChecker) -> CheckerPlan:
    """The checker's constraints judged per segment, from one segmented engine run (or, in an
    incremental check, from states kept per partition and segment)."""
    return CheckerPlan(
        checker.dataset, [], lambda _: judge_segments(checker), stored_segments(checker)
    )
