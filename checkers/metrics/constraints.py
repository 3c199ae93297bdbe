"""Constraints: an assertion, in Python, on one analyzer's metric. The unit of `Check`s and of
`MetricChecker`; evaluated with Deequ's rules."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING

from checkers.metrics._analyzer import Analyzer
from checkers.metrics._metric import Metric, MetricValue

if TYPE_CHECKING:
    from pyspark.sql import Column

#: A Python callable on the metric's value: a number, or a mapping for distributions.
MetricAssertion = Callable[[float], object] | Callable[[Mapping[str, object]], object]


class ConstraintStatus(StrEnum):
    SUCCESS = "Success"
    FAILURE = "Failure"


@dataclass(frozen=True)
class MetricConstraint:
    """`assertion(value)` must hold, where value is the metric (or `value_picker(metric)`).

    `row_condition`, when the constraint has a row meaning, builds the Column that is TRUE for
    the rows that satisfy it (used by row-level results).

    >>> MetricConstraint(Completeness("dep_time"), lambda v: v >= 0.95, "dep_time mostly set")
    """

    analyzer: Analyzer
    assertion: MetricAssertion
    description: str = ""
    hint: str = ""
    value_picker: Callable[[MetricValue], object] | None = field(default=None, compare=False)
    row_condition: Callable[[], Column] | None = field(default=None, compare=False, repr=False)
    #: For `has_no_anomalies`: what to compare the metric's history with (an AnomalySpec).
    anomaly: object | None = field(default=None, compare=False, repr=False)

    @property
    def name(self) -> str:
        return self.description or repr(self.analyzer)

    def value(self, metric: Metric) -> object:
        return self.value_picker(metric.value) if self.value_picker else metric.value  # type: ignore[arg-type]

    def evaluate(self, metric: Metric) -> str | None:
        """Why the constraint fails, or None when it holds. As in Deequ, a filtered analyzer
        that saw no rows has nothing to violate and holds."""
        if not metric.ok:
            if metric.empty and getattr(self.analyzer, "where", None):
                return None
            return f"metric could not be computed: {metric.error}"
        try:
            value = self.value(metric)
            holds = bool(self.assertion(value))  # type: ignore[arg-type]
        except Exception as exc:  # a broken assertion fails its constraint, visibly
            return f"assertion raised {type(exc).__name__}: {exc}"
        if holds:
            return None
        hint = f" ({self.hint})" if self.hint else ""
        return f"value {value!r} does not meet the constraint requirement{hint}"
