"""RatioOfSums: the sum of one numeric column divided by the sum of another (shared scan, exact
merge: both sums and their counts add up)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql.types import DataType, StructType

from checkers.metrics._analyzer import AdditiveState, ScanShareableAnalyzer, filtered
from checkers.metrics._metric import EmptyStateError, MetricComputationError
from checkers.metrics._schema import column, is_numeric
from checkers.metrics._serde import state_kind


@state_kind("ratio_of_sums")
@dataclass(frozen=True)
class RatioOfSumsState(AdditiveState):
    """Both sums, and how many non-NULL values each has (so "all NULL" survives merging)."""

    numerator: float
    denominator: float
    numerator_count: int
    denominator_count: int

    @classmethod
    def zero(cls) -> RatioOfSumsState:
        return cls(0.0, 0.0, 0, 0)


@dataclass(frozen=True, repr=False)
class RatioOfSums(ScanShareableAnalyzer):
    """`sum(numerator) / sum(denominator)` over rows that match `where`, each sum skipping its
    own NULLs (as in Deequ, a row may count in one sum and not the other).

    No non-NULL value in either column is an empty-state error; a denominator summing to zero
    is an error metric (Deequ returns an infinity or NaN, which passes assertions such as
    `v > 0.5` without saying why)."""

    numerator: str
    denominator: str
    where: str | None = None

    @property
    def columns(self) -> tuple[str, ...]:
        return (self.numerator, self.denominator)

    def column_type_error(self, dtype: DataType) -> str | None:
        return None if is_numeric(dtype) else "RatioOfSums needs numeric columns"

    def aggregations(self, schema: StructType) -> list[Column]:
        numerator = filtered(column(self.numerator), self.where).cast("double")
        denominator = filtered(column(self.denominator), self.where).cast("double")
        return [F.sum(numerator), F.sum(denominator), F.count(numerator), F.count(denominator)]

    def state_from_aggregates(self, values: Sequence[object]) -> RatioOfSumsState:
        numerator, denominator, numerator_count, denominator_count = values
        return RatioOfSumsState(
            float(numerator or 0.0),  # type: ignore[arg-type]
            float(denominator or 0.0),  # type: ignore[arg-type]
            int(numerator_count or 0),  # type: ignore[call-overload]
            int(denominator_count or 0),  # type: ignore[call-overload]
        )

    def zero_state(self) -> RatioOfSumsState:
        return RatioOfSumsState.zero()

    def compute_value(self, state: RatioOfSumsState) -> float:  # type: ignore[override]
        if state.numerator_count == 0 or state.denominator_count == 0:
            raise EmptyStateError(
                f"Empty state for {self!r}: no non-NULL value in the numerator or denominator"
            )
        if state.denominator == 0:
            raise MetricComputationError(
                f"{self!r}: the denominator sums to zero (numerator sum {state.numerator}); "
                "the ratio is undefined"
            )
        return state.numerator / state.denominator
