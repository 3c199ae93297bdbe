"""The core of `Check`: its level, the constraint list, `where`, and the helpers that build
row-level conditions. The constraint methods live in `check.py` and `_check_compliance.py`."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from enum import StrEnum
from typing import Self

from pyspark.sql import Column, Window
from pyspark.sql import functions as F

from checkers.metrics._analyzer import Analyzer
from checkers.metrics.anomaly import AnomalyStrategy
from checkers.metrics.constraints import MetricAssertion, MetricConstraint


@dataclasses.dataclass(frozen=True)
class AnomalySpec:
    strategy: AnomalyStrategy
    exclude_failed: bool = True
    tags: dict[str, str] = dataclasses.field(default_factory=dict)
    #: compare the newest partition's metric with earlier partitions, not the whole dataset's
    per_partition: bool = False
    #: low / medium / high (checkers.metrics.sensitivity); None: the check's, else medium
    sensitivity: str | None = None
    #: an absolute change below which nothing is anomalous; None: the check's, else none
    min_change: float | None = None


class CheckLevel(StrEnum):
    ERROR = "Error"
    WARNING = "Warning"


def is_one(value: float) -> bool:
    return value == 1.0


def _pick(key: str) -> Callable[[object], object]:
    """A value picker for one entry of a mapping-valued metric."""
    return lambda value: value[key]  # type: ignore[index]


def _quote(column: str) -> str:
    return "`" + column.replace("`", "``") + "`"


def _literal(value: object) -> str:
    if isinstance(value, str):
        return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"
    return repr(value)


def _names(columns: str | Sequence[str]) -> tuple[str, ...]:
    return (columns,) if isinstance(columns, str) else tuple(columns)


def _unique_rows(columns: tuple[str, ...]) -> Callable[[], Column]:
    """TRUE for rows whose key occurs once (rows with an all-NULL key are not judged: TRUE)."""

    def build() -> Column:
        key = [F.col(_quote(c)) for c in columns]
        count = F.count(F.lit(1)).over(Window.partitionBy(*key))
        all_null = F.lit(True)
        for column in key:
            all_null = all_null & column.isNull()
        return all_null | (count == 1)

    return build


def _sql_rows(predicate: str) -> Callable[[], Column]:
    return lambda: F.coalesce(F.expr(predicate), F.lit(False))


def _value_rows(
    expression: Callable[[], Column], assertion: MetricAssertion
) -> Callable[[], Column]:
    """TRUE where `assertion(value)` holds for the row's value (NULL values are not judged)."""

    def build() -> Column:
        from pyspark.sql.types import BooleanType

        judge = F.udf(lambda v: True if v is None else bool(assertion(v)), BooleanType())
        return judge(expression())

    return build


class CheckCore:
    """A named group of constraints with a level: failing constraints make the check's status
    its level (ERROR or WARNING)."""

    def __init__(self, level: CheckLevel, description: str) -> None:
        self.level = CheckLevel(level)
        self.description = description
        self._constraints: list[MetricConstraint] = []

    @property
    def constraints(self) -> tuple[MetricConstraint, ...]:
        return tuple(self._constraints)

    def __repr__(self) -> str:
        return (
            f"Check({self.level.value}, {self.description!r}, {len(self._constraints)} constraints)"
        )

    # -- building ---------------------------------------------------------------------------
    def add_constraint(
        self,
        analyzer: Analyzer,
        assertion: MetricAssertion,
        name: str,
        *,
        hint: str = "",
        value_picker: Callable[[object], object] | None = None,
        row_condition: Callable[[], Column] | None = None,
    ) -> Self:
        self._constraints.append(
            MetricConstraint(analyzer, assertion, name, hint, value_picker, row_condition)
        )
        return self

    def _constrain(
        self,
        analyzer: Analyzer,
        assertion: MetricAssertion,
        *,
        hint: str = "",
        row_condition: Callable[[], Column] | None = None,
    ) -> Self:
        """A constraint named after its analyzer: `MinimumConstraint(price)`."""
        name = f"{type(analyzer).__name__}Constraint({', '.join(analyzer.columns)})"
        return self.add_constraint(
            analyzer, assertion, name, hint=hint, row_condition=row_condition
        )

    def where(self, condition: str) -> Self:
        """Filter the constraint added last: only rows where `condition` holds are analyzed
        (rows it excludes count as satisfying the constraint at row level)."""
        if not self._constraints:
            raise ValueError("where() filters the last constraint; add one first")
        last = self._constraints[-1]
        if not any(f.name == "where" for f in dataclasses.fields(last.analyzer)):  # type: ignore[arg-type]
            raise ValueError(f"{type(last.analyzer).__name__} constraints cannot be filtered")
        rows = last.row_condition

        def filtered_rows() -> Column:
            assert rows is not None
            return F.when(F.coalesce(F.expr(condition), F.lit(False)), rows()).otherwise(True)

        self._constraints[-1] = dataclasses.replace(
            last,
            analyzer=dataclasses.replace(last.analyzer, where=condition),  # type: ignore[type-var]
            description=f"{last.description} where {condition}",
            row_condition=filtered_rows if rows is not None else None,
        )
        return self
