"""`MetricChecker`: Deequ-style constraints on metrics of one dataset. Each constraint is an
element: it fails when its assertion rejects the metric or the metric cannot be computed."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from pyspark.sql import DataFrame

from checkers._checker import Checker, CheckerPlan, CheckerResult
from checkers.metrics import Analyzer, Metric, Size
from checkers.outcome import json_safe
from checkers.tolerances import KnownBroken

#: A Python callable on the metric's value: a number, or a mapping for distributions.
MetricAssertion = Callable[[float], object] | Callable[[Mapping[str, object]], object]


@dataclass(frozen=True)
class MetricConstraint:
    """`assertion(metric value)` must hold; the assertion runs in Python on the computed value.

    >>> MetricConstraint(Completeness("dep_time"), lambda v: v >= 0.95, "dep_time mostly set")
    """

    analyzer: Analyzer
    assertion: MetricAssertion
    description: str = ""

    def evaluate(self, metric: Metric) -> str | None:
        """Why the constraint fails, or None when it holds."""
        if not metric.ok:
            return f"metric could not be computed: {metric.error}"
        try:
            holds = bool(self.assertion(metric.value))  # type: ignore[arg-type]
        except Exception as exc:  # a broken assertion fails its constraint, visibly
            return f"assertion raised {type(exc).__name__}: {exc}"
        return None if holds else f"value {metric.value!r} does not meet the constraint"


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
                label = constraint.description or repr(constraint.analyzer)
                values[label] = json_safe(metric.value) if metric.ok else None
                reason = constraint.evaluate(metric)
                if reason is not None:
                    failed.append(
                        {
                            "constraint": label,
                            "metric": metric.name,
                            "instance": metric.instance,
                            "value": json_safe(metric.value),
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
