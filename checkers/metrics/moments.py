"""Moment analyzers: Sum, Mean, StandardDeviation and Variance (population by default, as in
Deequ; sample on request) and Correlation (Pearson)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql.types import DataType, StructType

from checkers.metrics._analyzer import (
    AdditiveState,
    ScanShareableAnalyzer,
    SingleColumn,
    filtered,
)
from checkers.metrics._metric import EmptyStateError, MetricComputationError
from checkers.metrics._schema import column, is_numeric
from checkers.metrics._serde import state_kind


def _numeric_error(dtype: DataType) -> str | None:
    return None if is_numeric(dtype) else "a numeric column is required"


def _as_float(value: object) -> float:
    return 0.0 if value is None else float(value)  # type: ignore[arg-type]


def _empty(analyzer: object) -> EmptyStateError:
    return EmptyStateError(f"Empty state for {analyzer!r}: all input values were NULL")


@state_kind("sum")
@dataclass(frozen=True)
class SumState(AdditiveState):
    total: float
    count: int

    @classmethod
    def zero(cls) -> SumState:
        return cls(0.0, 0)


class _SingleNumericColumn(SingleColumn, ScanShareableAnalyzer):
    where: str | None

    def column_type_error(self, dtype: DataType) -> str | None:
        return _numeric_error(dtype)

    def values(self) -> Column:
        return filtered(column(self.column).cast("double"), self.where)


@dataclass(frozen=True, repr=False)
class Sum(_SingleNumericColumn):
    """Sum of the non-NULL values (as double)."""

    column: str
    where: str | None = None

    def aggregations(self, schema: StructType) -> list[Column]:
        return [F.sum(self.values()), F.count(self.values())]

    def state_from_aggregates(self, values: Sequence[object]) -> SumState:
        return SumState(_as_float(values[0]), int(values[1] or 0))  # type: ignore[call-overload]

    def zero_state(self) -> SumState:
        return SumState.zero()

    def compute_value(self, state: SumState) -> float:  # type: ignore[override]
        if state.count == 0:
            raise _empty(self)
        return state.total


@dataclass(frozen=True, repr=False)
class Mean(Sum):
    """Mean of the non-NULL values."""

    def compute_value(self, state: SumState) -> float:  # type: ignore[override]
        if state.count == 0:
            raise _empty(self)
        return state.total / state.count


@state_kind("moments")
@dataclass(frozen=True)
class MomentsState:
    """Count, mean and sum of squared deviations; merged with Chan's parallel formula."""

    n: int
    avg: float
    m2: float

    @classmethod
    def zero(cls) -> MomentsState:
        return cls(0, 0.0, 0.0)

    def merge(self, other: MomentsState) -> MomentsState:
        n = self.n + other.n
        if n == 0:
            return MomentsState.zero()
        delta = other.avg - self.avg
        avg = self.avg + delta * other.n / n
        m2 = self.m2 + other.m2 + delta * delta * self.n * other.n / n
        return MomentsState(n, avg, m2)


@dataclass(frozen=True, repr=False)
class _Dispersion(_SingleNumericColumn):
    """Spread of the non-NULL values from `MomentsState`: population (`m2 / n`, Deequ's) or,
    with `sample=True`, sample (`m2 / (n - 1)`, Spark's `var_samp`)."""

    column: str
    where: str | None = None
    sample: bool = field(default=False, kw_only=True)

    @property
    def metric_name(self) -> str:
        return f"Sample{type(self).__name__}" if self.sample else type(self).__name__

    def aggregations(self, schema: StructType) -> list[Column]:
        values = self.values()
        return [F.count(values), F.avg(values), F.var_pop(values)]

    def state_from_aggregates(self, values: Sequence[object]) -> MomentsState:
        n = int(values[0] or 0)  # type: ignore[call-overload]
        return MomentsState(n, _as_float(values[1]), _as_float(values[2]) * n)

    def zero_state(self) -> MomentsState:
        return MomentsState.zero()

    def variance(self, state: MomentsState) -> float:
        if state.n == 0:
            raise _empty(self)
        if not self.sample:
            return max(state.m2, 0.0) / state.n
        if state.n == 1:
            raise MetricComputationError(
                f"{self!r} is undefined for a single value (the sample estimate divides by n - 1);"
                " use sample=False for the population one"
            )
        return max(state.m2, 0.0) / (state.n - 1)

    def __repr__(self) -> str:
        # `sample=False` stays out of the text, so population analyzers keep the keys their
        # stored states and metrics had before the option existed
        shown = {k: v for k, v in vars(self).items() if v not in (None, ()) and v is not False}
        return f"{type(self).__name__}({', '.join(f'{k}={v!r}' for k, v in shown.items())})"


@dataclass(frozen=True, repr=False)
class StandardDeviation(_Dispersion):
    """Standard deviation of the non-NULL values: population `sqrt(m2 / n)` (Deequ's), or
    `sqrt(m2 / (n - 1))` with `sample=True` (Spark's `stddev_samp`).

        StandardDeviation("price", sample=True)
    """

    def compute_value(self, state: MomentsState) -> float:  # type: ignore[override]
        return math.sqrt(self.variance(state))


@dataclass(frozen=True, repr=False)
class Variance(_Dispersion):
    """Variance of the non-NULL values: population `m2 / n` (Deequ's), or `m2 / (n - 1)` with
    `sample=True` (Spark's `var_samp`)."""

    def compute_value(self, state: MomentsState) -> float:  # type: ignore[override]
        return self.variance(state)


@state_kind("co_moments")
@dataclass(frozen=True)
class CoMomentsState:
    """Count, means, co-moment and both second moments of the rows where both values are set."""

    n: int
    x_avg: float
    y_avg: float
    ck: float
    x_m2: float
    y_m2: float

    @classmethod
    def zero(cls) -> CoMomentsState:
        return cls(0, 0.0, 0.0, 0.0, 0.0, 0.0)

    def merge(self, other: CoMomentsState) -> CoMomentsState:
        n = self.n + other.n
        if n == 0:
            return CoMomentsState.zero()
        dx = other.x_avg - self.x_avg
        dy = other.y_avg - self.y_avg
        weight = self.n * other.n / n
        return CoMomentsState(
            n,
            self.x_avg + dx * other.n / n,
            self.y_avg + dy * other.n / n,
            self.ck + other.ck + dx * dy * weight,
            self.x_m2 + other.x_m2 + dx * dx * weight,
            self.y_m2 + other.y_m2 + dy * dy * weight,
        )


@dataclass(frozen=True, repr=False)
class Correlation(ScanShareableAnalyzer):
    """Pearson correlation of two numeric columns over rows where both are non-NULL.

    A constant column gives NaN (as in Deequ), not an error."""

    first_column: str
    second_column: str
    where: str | None = None

    @property
    def columns(self) -> tuple[str, ...]:
        return (self.first_column, self.second_column)

    def column_type_error(self, dtype: DataType) -> str | None:
        return _numeric_error(dtype)

    def aggregations(self, schema: StructType) -> list[Column]:
        x = column(self.first_column).cast("double")
        y = column(self.second_column).cast("double")
        both = filtered(x.isNotNull() & y.isNotNull(), self.where)
        xs, ys = F.when(both, x), F.when(both, y)
        return [
            F.count(xs),
            F.avg(xs),
            F.avg(ys),
            F.covar_pop(xs, ys),
            F.var_pop(xs),
            F.var_pop(ys),
        ]

    def state_from_aggregates(self, values: Sequence[object]) -> CoMomentsState:
        n = int(values[0] or 0)  # type: ignore[call-overload]
        x_avg, y_avg, cov, x_var, y_var = (_as_float(v) for v in values[1:6])
        return CoMomentsState(n, x_avg, y_avg, cov * n, x_var * n, y_var * n)

    def zero_state(self) -> CoMomentsState:
        return CoMomentsState.zero()

    def compute_value(self, state: CoMomentsState) -> float:  # type: ignore[override]
        if state.n == 0:
            raise _empty(self)
        denominator = math.sqrt(state.x_m2 * state.y_m2)
        return math.nan if denominator == 0 else state.ck / denominator
