"""`MetricChecker`: Deequ-style constraints on metrics of one dataset. Each constraint is an
element: it fails when its assertion rejects the metric or the metric cannot be computed."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol

from pyspark.sql import DataFrame

from checkers._checker import Checker, CheckerPlan, CheckerResult
from checkers.metrics import Analyzer, Metric, Size
from checkers.metrics.constraints import MetricConstraint
from checkers.outcome import json_safe
from checkers.tolerances import KnownBroken

__all__ = ["ConstraintSource", "MetricChecker", "MetricConstraint"]


class ConstraintSource(Protocol):
    """Anything holding constraints (a Deequ-style `Check`)."""

    @property
    def constraints(self) -> Sequence[MetricConstraint]: ...


class MetricChecker(Checker):
    """Metric constraints over `dataset`, all computed in one engine run. Failing elements are the
    constraints that do not hold; the sample lists them with their values and reasons. A constraint
    on a column the dataset lacks makes the whole checker an error, not a failure."""

    def __init__(
        self,
        dataset: DataFrame,
        constraints: Sequence[MetricConstraint | ConstraintSource],
    ) -> None:
        flat: list[MetricConstraint] = []
        for item in constraints:
            flat.extend([item] if isinstance(item, MetricConstraint) else item.constraints)
        if not flat:
            raise ValueError("MetricChecker needs at least one constraint")
        self.dataset = dataset
        self.constraints = tuple(flat)

    def plan(self, excused: Sequence[KnownBroken] = ()) -> CheckerPlan:
        if excused:
            raise ValueError("KnownBroken keys do not apply to metric constraints")
        frame = self.dataset
        schema = frame.schema
        size = Size()

        def finish(metrics: Mapping[Analyzer, Metric]) -> CheckerResult:
            for constraint in self.constraints:
                problem = constraint.analyzer.schema_error(schema)
                if problem is not None:
                    return CheckerResult.failed_to_run(problem)
            failed, values = [], {}
            for constraint in self.constraints:
                metric = metrics[constraint.analyzer]
                label = constraint.name
                values[label] = json_safe(constraint.value(metric)) if metric.ok else None
                reason = constraint.evaluate(metric)
                if reason is not None:
                    failed.append(
                        {
                            "constraint": label,
                            "metric": metric.name,
                            "instance": metric.instance,
                            "value": json_safe(constraint.value(metric)) if metric.ok else None,
                            "reason": reason,
                        }
                    )
            rows = metrics[size]
            return CheckerResult(
                failing=len(failed),
                total=len(self.constraints),
                unexcused=len(failed),
                rows=int(rows.value) if rows.ok else None,  # type: ignore[arg-type]
                metrics=values,
                fetch_sample=lambda limit: failed[:limit],
            )

        analyzers = [size, *(c.analyzer for c in self.constraints)]
        return CheckerPlan(frame, list(dict.fromkeys(analyzers)), finish)
