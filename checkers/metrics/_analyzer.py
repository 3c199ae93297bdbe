"""Analyzer base classes: frozen values that say which state they need and how it becomes a
metric."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, ClassVar, Protocol, TypeVar

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import DataType, StructType

from checkers.metrics._metric import (
    EmptyStateError,
    Entity,
    Metric,
    MetricComputationError,
    MetricValue,
)
from checkers.metrics._schema import resolve_type, type_name
from checkers.metrics.agreement import Agreement

S = TypeVar("S", bound="State")


class State(Protocol):
    """A commutative monoid element: `a.merge(b) == b.merge(a)`, and `zero()` is the identity."""

    def merge(self: S, other: S) -> S: ...


class AdditiveState:
    """Mixin for dataclass states whose fields all add up when merged (counts and sums)."""

    def merge(self: S, other: S) -> S:
        names = [f.name for f in fields(self)]  # type: ignore[arg-type]
        return type(self)(*(getattr(self, n) + getattr(other, n) for n in names))


class SingleColumn:
    """Mixin for analyzers of one `column` field."""

    column: str

    @property
    def columns(self) -> tuple[str, ...]:
        return (self.column,)


def filtered(col: Column, where: str | None) -> Column:
    """`col` where the filter holds, NULL elsewhere, so filtered analyzers still share one scan."""
    return col if where is None else F.when(F.expr(where), col)


def rows_matching(where: str | None) -> Column:
    """Number of rows the filter keeps (a NULL filter result excludes the row, as in Deequ)."""
    return F.count(F.lit(1)) if where is None else F.count(F.when(F.expr(where), F.lit(1)))


class Analyzer(ABC):
    """Base of every analyzer. Subclasses are frozen dataclasses, so equal parameters mean equal
    analyzers: they key results and stored states, and duplicates collapse."""

    entity_kind: ClassVar[Entity] = Entity.COLUMN
    if TYPE_CHECKING:

        @property
        def columns(self) -> tuple[str, ...]:
            """Columns the analyzer reads (beyond those its `where` or SQL predicate mention)."""
    else:
        columns = ()  # a plain attribute, so dataclass subclasses may make it a field
    #: Spark SQL filter: only rows where it is TRUE are analyzed.
    where: str | None = None

    @property
    def metric_name(self) -> str:
        return type(self).__name__

    @property
    def entity(self) -> Entity:
        if self.entity_kind is Entity.DATASET:
            return Entity.DATASET
        return Entity.MULTICOLUMN if len(self.columns) > 1 else Entity.COLUMN

    @property
    def instance(self) -> str:
        return ",".join(self.columns) if self.columns else "*"

    def schema_error(self, schema: StructType) -> str | None:
        """Why the analyzer cannot run on this schema, or None. Checked before any Spark work."""
        for name in self.columns:
            dtype = resolve_type(schema, name)
            if dtype is None:
                available = ", ".join(schema.fieldNames())
                return f"{self!r}: column {name!r} does not exist (available: {available})"
            problem = self.column_type_error(dtype)
            if problem:
                return f"{self!r}: column {name!r} has type {type_name(dtype)}; {problem}"
        return None

    def column_type_error(self, dtype: DataType) -> str | None:
        """Override to restrict column types; return what is wrong, or None."""
        return None

    @abstractmethod
    def compute_value(self, state: State) -> MetricValue:
        """The metric of a state; raises `MetricComputationError` when it is undefined."""

    def metric_from_state(self, state: State) -> Metric:
        try:
            return Metric(self, value=self.compute_value(state), agreement=self.agreement(state))
        except MetricComputationError as exc:
            return Metric(self, error=str(exc), empty=isinstance(exc, EmptyStateError))

    def agreement(self, state: State) -> Agreement | None:
        """How a recomputation of the same data from scratch may answer, given the (merged)
        `state`: None when exactly the same (counts, sums, frequency tables); a sketch says
        within its documented error."""
        return None

    def __repr__(self) -> str:
        fields = [f"{k}={v!r}" for k, v in vars(self).items() if v not in (None, ())]
        return f"{type(self).__name__}({', '.join(fields)})"


class ScanShareableAnalyzer(Analyzer):
    """An analyzer whose state comes from aggregate Columns, computed in the shared scan."""

    #: Sketches are typed (imperative) aggregates; the planner may give them a pass of their own.
    is_sketch: ClassVar[bool] = False

    @abstractmethod
    def aggregations(self, schema: StructType) -> list[Column]:
        """Aggregate Columns over the dataset; their values feed `state_from_aggregates`."""

    @abstractmethod
    def state_from_aggregates(self, values: Sequence[object]) -> State:
        """Build the state from this analyzer's slice of the aggregated row."""

    @abstractmethod
    def zero_state(self) -> State:
        """The identity of this analyzer's state monoid."""


class OwnPassAnalyzer(Analyzer):
    """An analyzer whose state needs Spark work of its own (fitting and scoring a model), run by
    the runner after the shared passes."""

    @abstractmethod
    def compute_state(self, df: DataFrame, earlier: State | None) -> tuple[State, int]:
        """The state of `df` and the Spark actions taken; `earlier` is the state of data analyzed
        before, which will be merged with the result (a model may score `df` with it)."""

    @abstractmethod
    def zero_state(self) -> State:
        """The identity of this analyzer's state monoid."""


class FrequencyAnalyzer(Analyzer):
    """An analyzer computed from the frequency table of its grouping columns (after `where`).

    All frequency analyzers over the same (columns, where) share one frequency table, and all
    frequency tables of a run are built by one grouping query."""

    #: Whether rows whose grouping columns are all NULL stay in the table (Histogram keeps them).
    keeps_null_rows: ClassVar[bool] = False

    def column_type_error(self, dtype: DataType) -> str | None:
        from checkers.metrics._schema import is_groupable

        return None if is_groupable(dtype) else "maps cannot be grouped"

    @property
    def grouping_columns(self) -> tuple[str, ...]:
        """Names of the table's key columns: source columns, or derived keys (`key_source`)."""
        return self.columns

    @property
    def grouping_key(self) -> tuple[tuple[str, ...], str | None]:
        """Analyzers with the same key share a frequency table."""
        return (tuple(sorted(self.grouping_columns)), self.where)

    def key_source(self, name: str) -> Column:
        """The expression a key column of the frequency table is grouped by."""
        return F.col(name)

    def key_type(self, schema: StructType, name: str) -> DataType | None:
        """The type of a key column (keys of one type share a stacked group-by)."""
        return resolve_type(schema, name)

    def window_columns(self, view: FrequencyView) -> dict[str, Column]:
        """Per-row columns over the frequency table (window functions), keyed by unique name."""
        return {}

    def extra_aggregations(self, view: FrequencyView) -> list[Column]:
        """Aggregates beyond the shared summary; only rows where `view.set_condition` holds."""
        return []

    @abstractmethod
    def value_from_frequencies(
        self, summary: FrequencySummary, extras: Sequence[object]
    ) -> MetricValue:
        """The metric from its set's summary and its `extra_aggregations` values."""

    def compute_value(self, state: State) -> MetricValue:
        raise MetricComputationError(
            f"{self!r}: frequency metrics are computed by the runner from frequency tables"
        )


@dataclass(frozen=True)
class FrequencySummary:
    """What every frequency metric needs, computed once per grouping set. "Keyed" rows are those
    whose grouping columns are not all NULL."""

    num_rows: int = 0  # keyed source rows
    groups: int = 0  # distinct keyed keys
    singles: int = 0  # keyed keys seen exactly once
    c_ln_c: float = 0.0  # sum over keyed keys of count * ln(count)
    all_rows: int = 0  # source rows, NULL keys included
    all_groups: int = 0  # distinct keys, the all-NULL key included


@dataclass(frozen=True)
class FrequencyView:
    """How a frequency analyzer sees the unified frequency table in the metrics query: one row per
    (grouping set, key) with the key's source-row count."""

    set_condition: Column  # the row belongs to this analyzer's (columns, where)
    count: Column  # how many source rows have this key
    key_names: dict[str, str]  # source column name -> its column in the frequency table
    name_prefix: str  # unique prefix for window columns of this analyzer
    by: tuple[str, ...] = ()  # segment columns: windows partition by these too

    def window_partition(self) -> list[Column]:
        """What window functions partition by: the set (its name is the table's `__dq_set`)
        and the segment columns."""
        return [F.col("__dq_set"), *[F.col(b) for b in self.by]]

    def key(self, name: str) -> Column:
        return F.col(self.key_names[name])
