"""Counting analyzers: Size, Completeness, Compliance, PatternMatch and ZerosCount (shared scan,
exact merge)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import ClassVar

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql.types import DataType, StructType

from checkers.metrics._analyzer import (
    AdditiveState,
    ScanShareableAnalyzer,
    SingleColumn,
    filtered,
    rows_matching,
)
from checkers.metrics._metric import EmptyStateError, Entity
from checkers.metrics._schema import column, is_numeric, is_string
from checkers.metrics._serde import state_kind


@state_kind("num_matches")
@dataclass(frozen=True)
class NumMatchesState(AdditiveState):
    num_matches: int

    @classmethod
    def zero(cls) -> NumMatchesState:
        return cls(0)


@state_kind("num_matches_and_count")
@dataclass(frozen=True)
class NumMatchesAndCountState(AdditiveState):
    num_matches: int
    count: int

    @classmethod
    def zero(cls) -> NumMatchesAndCountState:
        return cls(0, 0)

    def ratio(self, analyzer: object) -> float:
        if self.count == 0:
            raise EmptyStateError(f"Empty state for {analyzer!r}: no rows to evaluate")
        return self.num_matches / self.count


@dataclass(frozen=True, repr=False)
class Size(ScanShareableAnalyzer):
    """Number of rows (that match `where`)."""

    where: str | None = None
    entity_kind: ClassVar[Entity] = Entity.DATASET

    def aggregations(self, schema: StructType) -> list[Column]:
        return [rows_matching(self.where)]

    def state_from_aggregates(self, values: Sequence[object]) -> NumMatchesState:
        return NumMatchesState(int(values[0] or 0))  # type: ignore[call-overload]

    def zero_state(self) -> NumMatchesState:
        return NumMatchesState.zero()

    def compute_value(self, state: NumMatchesState) -> float:  # type: ignore[override]
        return float(state.num_matches)


@dataclass(frozen=True, repr=False)
class CountWhere(ScanShareableAnalyzer):
    """Number of rows for which a Column `condition` is TRUE (NULL counts as not TRUE).

    Identified by `instance_name` alone (Columns cannot be compared), so give each condition a
    name unique within a run. Checkers compile row predicates to it."""

    instance_name: str
    condition: Column = field(compare=False, hash=False)
    entity_kind: ClassVar[Entity] = Entity.DATASET

    @property
    def instance(self) -> str:
        return self.instance_name

    def aggregations(self, schema: StructType) -> list[Column]:
        return [F.count(F.when(self.condition, F.lit(1)))]

    def state_from_aggregates(self, values: Sequence[object]) -> NumMatchesState:
        return NumMatchesState(int(values[0] or 0))  # type: ignore[call-overload]

    def zero_state(self) -> NumMatchesState:
        return NumMatchesState.zero()

    def compute_value(self, state: NumMatchesState) -> float:  # type: ignore[override]
        return float(state.num_matches)

    def __repr__(self) -> str:
        return f"CountWhere({self.instance_name!r})"


@dataclass(frozen=True, repr=False)
class ZerosCount(SingleColumn, ScanShareableAnalyzer):
    """Number of values (in rows that match `where`) equal to zero in a numeric column; NULL and
    NaN are not zero, -0.0 is. 0 on empty input (Deequ: an empty-state error there, yet 0 when
    `where` keeps no row)."""

    column: str
    where: str | None = None

    def column_type_error(self, dtype: DataType) -> str | None:
        return None if is_numeric(dtype) else "ZerosCount needs a numeric column"

    def aggregations(self, schema: StructType) -> list[Column]:
        zero = filtered(column(self.column), self.where) == 0
        return [F.count(F.when(zero, F.lit(1)))]

    def state_from_aggregates(self, values: Sequence[object]) -> NumMatchesState:
        return NumMatchesState(int(values[0] or 0))  # type: ignore[call-overload]

    def zero_state(self) -> NumMatchesState:
        return NumMatchesState.zero()

    def compute_value(self, state: NumMatchesState) -> float:  # type: ignore[override]
        return float(state.num_matches)


class _RatioAnalyzer(ScanShareableAnalyzer):
    """Share of rows (that match `where`) satisfying a condition: `matches / rows`."""

    def zero_state(self) -> NumMatchesAndCountState:
        return NumMatchesAndCountState.zero()

    def state_from_aggregates(self, values: Sequence[object]) -> NumMatchesAndCountState:
        return NumMatchesAndCountState(int(values[0] or 0), int(values[1] or 0))  # type: ignore[call-overload]

    def compute_value(self, state: NumMatchesAndCountState) -> float:  # type: ignore[override]
        return state.ratio(self)


@dataclass(frozen=True, repr=False)
class Completeness(SingleColumn, _RatioAnalyzer):
    """Share of rows whose `column` is not NULL."""

    column: str
    where: str | None = None

    def aggregations(self, schema: StructType) -> list[Column]:
        # count(col) counts non-NULLs natively, cheaper than summing an IS NOT NULL flag.
        return [F.count(filtered(column(self.column), self.where)), rows_matching(self.where)]


@dataclass(frozen=True, repr=False)
class Compliance(_RatioAnalyzer):
    """Share of rows for which the SQL `predicate` is TRUE (NULL counts as not compliant).

    `instance` names the metric; `columns` lists columns the predicate needs, checked up front."""

    instance_name: str
    predicate: str
    where: str | None = None
    predicate_columns: tuple[str, ...] = ()

    @property
    def columns(self) -> tuple[str, ...]:
        return tuple(self.predicate_columns)

    @property
    def instance(self) -> str:
        return self.instance_name

    def aggregations(self, schema: StructType) -> list[Column]:
        condition = F.expr(self.predicate)
        if self.where is not None:
            condition = F.expr(self.where) & condition
        return [F.count(F.when(condition, F.lit(1))), rows_matching(self.where)]


@dataclass(frozen=True, repr=False)
class PatternMatch(SingleColumn, _RatioAnalyzer):
    """Share of rows whose string `column` contains a match of the regular expression `pattern`.

    NULL counts as no match. Unlike Deequ, a pattern that matches the empty string (`^$`) matches
    an empty value: Deequ's extract-based test treats an empty match as a non-match."""

    column: str
    pattern: str
    where: str | None = None

    def column_type_error(self, dtype: DataType) -> str | None:
        return None if is_string(dtype) else "PatternMatch needs a string column"

    def aggregations(self, schema: StructType) -> list[Column]:
        matches = column(self.column).rlike(self.pattern)
        return [F.count(F.when(filtered(matches, self.where), F.lit(1))), rows_matching(self.where)]


class Patterns:
    """Common patterns for PatternMatch (find semantics: anchor them to match whole values)."""

    EMAIL = r"^[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}$"
    URL = r"^(https?|ftp)://[^\s/$.?#][^\s]*$"
    SOCIAL_SECURITY_NUMBER_US = r"^(?!000|666|9\d{2})\d{3}-(?!00)\d{2}-(?!0000)\d{4}$"
    CREDITCARD = r"^(?:\d{4}[- ]?){3}\d{4}$|^\d{4}[- ]?\d{6}[- ]?\d{5}$"
