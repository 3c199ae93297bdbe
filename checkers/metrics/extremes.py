"""Extreme-value analyzers: Minimum, Maximum, MinLength and MaxLength."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql.types import DataType, StructType

from checkers.metrics._analyzer import ScanShareableAnalyzer, SingleColumn, filtered
from checkers.metrics._metric import EmptyStateError
from checkers.metrics._schema import column, is_numeric, is_string
from checkers.metrics._serde import state_kind


@state_kind("min")
@dataclass(frozen=True)
class MinState:
    value: float | None  # None: no value seen yet (the identity)

    @classmethod
    def zero(cls) -> MinState:
        return cls(None)

    def merge(self, other: MinState) -> MinState:
        if self.value is None or other.value is None:
            return self if other.value is None else other
        return MinState(min(self.value, other.value))


@state_kind("max")
@dataclass(frozen=True)
class MaxState:
    value: float | None

    @classmethod
    def zero(cls) -> MaxState:
        return cls(None)

    def merge(self, other: MaxState) -> MaxState:
        if self.value is None or other.value is None:
            return self if other.value is None else other
        return MaxState(max(self.value, other.value))


class NullBehavior(StrEnum):
    """How MinLength/MaxLength treat NULL: skip it, read it as "", or make the metric fail."""

    IGNORE = "ignore"
    EMPTY_STRING = "empty_string"
    FAIL = "fail"


class _Extreme(SingleColumn, ScanShareableAnalyzer):
    column: str
    where: str | None
    is_min: bool = True

    def source(self) -> Column:
        return column(self.column).cast("double")

    def aggregations(self, schema: StructType) -> list[Column]:
        values = filtered(self.source(), self.where)
        return [F.min(values) if self.is_min else F.max(values)]

    def state_from_aggregates(self, values: Sequence[object]) -> MinState | MaxState:
        value = None if values[0] is None else float(values[0])  # type: ignore[arg-type]
        return MinState(value) if self.is_min else MaxState(value)

    def zero_state(self) -> MinState | MaxState:
        return MinState.zero() if self.is_min else MaxState.zero()

    def compute_value(self, state: MinState | MaxState) -> float:  # type: ignore[override]
        if state.value is None:
            raise EmptyStateError(f"Empty state for {self!r}: all input values were NULL")
        return state.value


@dataclass(frozen=True, repr=False)
class Minimum(_Extreme):
    """Smallest non-NULL value of a numeric column."""

    column: str
    where: str | None = None

    def column_type_error(self, dtype: DataType) -> str | None:
        return None if is_numeric(dtype) else "a numeric column is required"


@dataclass(frozen=True, repr=False)
class Maximum(Minimum):
    """Largest non-NULL value of a numeric column."""

    is_min = False


@dataclass(frozen=True, repr=False)
class MinLength(_Extreme):
    """Shortest string length in a column; NULLs follow `null_behavior` (default: ignored)."""

    column: str
    where: str | None = None
    null_behavior: NullBehavior = NullBehavior.IGNORE

    def column_type_error(self, dtype: DataType) -> str | None:
        return None if is_string(dtype) else "a string column is required"

    def source(self) -> Column:
        length = F.length(column(self.column)).cast("double")
        if self.null_behavior is NullBehavior.EMPTY_STRING:
            return F.coalesce(length, F.lit(0.0))
        if self.null_behavior is NullBehavior.FAIL:
            # A NULL becomes the most extreme length, so any assertion on the metric fails.
            return F.coalesce(length, F.lit(float("-inf") if self.is_min else float("inf")))
        return length


@dataclass(frozen=True, repr=False)
class MaxLength(MinLength):
    """Longest string length in a column; NULLs follow `null_behavior` (default: ignored)."""

    is_min = False
