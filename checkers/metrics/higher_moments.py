"""Shape analyzers: Skewness and Kurtosis (population, excess kurtosis), as in Deequ, from one
mergeable state of the first four central moments."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql.types import StructType

from checkers.metrics._serde import state_kind
from checkers.metrics.moments import _as_float, _empty, _SingleNumericColumn


def _finite(value: object) -> float:
    """Spark's skewness and kurtosis are NULL (NaN in legacy mode) when all values are equal;
    then the third and fourth central moments are 0."""
    number = _as_float(value)
    return number if math.isfinite(number) else 0.0


@state_kind("higher_moments")
@dataclass(frozen=True)
class HigherMomentsState:
    """Count, mean and the sums of 2nd, 3rd and 4th powers of deviations from the mean; merged
    with the exact pairwise formulas (Chan et al. for m2, Pébay 2008 for m3 and m4)."""

    n: int
    avg: float
    m2: float
    m3: float
    m4: float

    @classmethod
    def zero(cls) -> HigherMomentsState:
        return cls(0, 0.0, 0.0, 0.0, 0.0)

    def merge(self, other: HigherMomentsState) -> HigherMomentsState:
        n_a, n_b = self.n, other.n
        n = n_a + n_b
        if n == 0:
            return HigherMomentsState.zero()
        delta = other.avg - self.avg
        d = delta / n  # the mean's shift per value
        m2 = self.m2 + other.m2 + delta * d * n_a * n_b
        m3 = (
            self.m3
            + other.m3
            + delta * d * d * n_a * n_b * (n_a - n_b)
            + 3.0 * d * (n_a * other.m2 - n_b * self.m2)
        )
        m4 = (
            self.m4
            + other.m4
            + delta * d**3 * n_a * n_b * (n_a * n_a - n_a * n_b + n_b * n_b)
            + 6.0 * d * d * (n_a * n_a * other.m2 + n_b * n_b * self.m2)
            + 4.0 * d * (n_a * other.m3 - n_b * self.m3)
        )
        return HigherMomentsState(n, self.avg + d * n_b, m2, m3, m4)


class _Shape(_SingleNumericColumn):
    """Reads the four central moments from Spark's own aggregates: m2 = n·var_pop, and m3, m4
    back from skewness = sqrt(n)·m3 / m2^1.5 and kurtosis = n·m4 / m2² - 3 (Spark computes them
    with stable online updates, so no sums of powers lose precision here)."""

    def aggregations(self, schema: StructType) -> list[Column]:
        values = self.values()
        return [
            F.count(values),
            F.avg(values),
            F.var_pop(values),
            F.skewness(values),
            F.kurtosis(values),
        ]

    def state_from_aggregates(self, values: Sequence[object]) -> HigherMomentsState:
        n = int(values[0] or 0)  # type: ignore[call-overload]
        if n == 0:
            return HigherMomentsState.zero()
        m2 = _as_float(values[2]) * n
        m3 = _finite(values[3]) * m2**1.5 / math.sqrt(n)
        m4 = (_finite(values[4]) + 3.0) * m2 * m2 / n if m2 > 0 else 0.0
        return HigherMomentsState(n, _as_float(values[1]), m2, m3, m4)

    def compute_value(self, state: HigherMomentsState) -> float:  # type: ignore[override]
        """No values is an empty state; equal values have no shape: 0, as in Deequ."""
        if state.n == 0:
            raise _empty(self)
        return 0.0 if state.m2 <= 0 else self._shape(state)

    def _shape(self, state: HigherMomentsState) -> float:
        raise NotImplementedError

    def zero_state(self) -> HigherMomentsState:
        return HigherMomentsState.zero()


@dataclass(frozen=True, repr=False)
class Skewness(_Shape):
    """Population skewness of the non-NULL values, `sqrt(n)·m3 / m2^1.5`; 0 when all values are
    equal (as in Deequ).

        Skewness("trip_distance", where="vendor = 'A'")
    """

    column: str
    where: str | None = None

    def _shape(self, state: HigherMomentsState) -> float:
        return math.sqrt(state.n) * state.m3 / state.m2**1.5


@dataclass(frozen=True, repr=False)
class Kurtosis(_Shape):
    """Population excess kurtosis of the non-NULL values, `n·m4 / m2² - 3` (a normal
    distribution gives 0); 0 when all values are equal (as in Deequ)."""

    column: str
    where: str | None = None

    def _shape(self, state: HigherMomentsState) -> float:
        return state.n * state.m4 / (state.m2 * state.m2) - 3.0
