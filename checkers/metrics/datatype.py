"""DataType: how many values of a column look fractional, integral, boolean or plain string."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql.types import BooleanType, IntegralType, StructType

from checkers.metrics._analyzer import (
    AdditiveState,
    ScanShareableAnalyzer,
    SingleColumn,
    filtered,
    rows_matching,
)
from checkers.metrics._metric import EmptyStateError
from checkers.metrics._schema import column, resolve_type
from checkers.metrics._serde import state_kind

FRACTIONAL = r"^(-|\+)? ?\d+((\.\d+)|((?:\.\d+)?[Ee][-+]?\d+))$"
INTEGRAL = r"^(-|\+)? ?\d+$"
BOOLEAN = r"^(true|false)$"
TYPE_NAMES = ("Unknown", "Fractional", "Integral", "Boolean", "String")


@state_kind("data_type")
@dataclass(frozen=True)
class DataTypeState(AdditiveState):
    unknown: int
    fractional: int
    integral: int
    boolean: int
    string: int

    @classmethod
    def zero(cls) -> DataTypeState:
        return cls(0, 0, 0, 0, 0)

    def counts(self) -> tuple[int, int, int, int, int]:
        return (self.unknown, self.fractional, self.integral, self.boolean, self.string)

    def inferred_type(self) -> str:
        """Deequ's rule: any string, or booleans mixed with numbers, make the column a String."""
        if self.fractional + self.integral + self.boolean + self.string == 0:
            return "Unknown"
        if self.string > 0 or (self.boolean > 0 and self.fractional + self.integral > 0):
            return "String"
        if self.boolean > 0:
            return "Boolean"
        return "Fractional" if self.fractional > 0 else "Integral"


@dataclass(frozen=True, repr=False)
class DataType(SingleColumn, ScanShareableAnalyzer):
    """Distribution of value kinds in a column, read from each value's string form; NULL is
    "Unknown". The value: `{"inferred_type", "counts", "ratios"}`, ratios over all rows."""

    column: str
    where: str | None = None

    def aggregations(self, schema: StructType) -> list[Column]:
        dtype = resolve_type(schema, self.column)
        text = filtered(column(self.column).cast("string"), self.where)
        non_null = F.count(text)
        zero = F.lit(0)
        # Native integral and boolean columns need no regular expression: their class is known.
        if isinstance(dtype, IntegralType):
            kinds = [zero, non_null, zero]
        elif isinstance(dtype, BooleanType):
            kinds = [zero, zero, non_null]
        else:
            kinds = [
                F.count(F.when(text.rlike(p), F.lit(1))) for p in (FRACTIONAL, INTEGRAL, BOOLEAN)
            ]
        return [rows_matching(self.where), non_null, *kinds]

    def state_from_aggregates(self, values: Sequence[object]) -> DataTypeState:
        total, non_null, fractional, integral, boolean = (int(v or 0) for v in values[:5])  # type: ignore[call-overload]
        string = non_null - fractional - integral - boolean
        return DataTypeState(total - non_null, fractional, integral, boolean, string)

    def zero_state(self) -> DataTypeState:
        return DataTypeState.zero()

    def compute_value(self, state: DataTypeState) -> dict[str, object]:  # type: ignore[override]
        total = sum(state.counts())
        if total == 0:
            raise EmptyStateError(f"Empty state for {self!r}: no rows to evaluate")
        counts = dict(zip(TYPE_NAMES, state.counts(), strict=True))
        return {
            "inferred_type": state.inferred_type(),
            "counts": counts,
            "ratios": {name: n / total for name, n in counts.items()},
        }
