"""Analyzers outside the shared passes: `ColumnCount` reads the schema alone (no Spark job) and
`CustomSql` runs a SQL statement of its own (one Spark job each)."""

from __future__ import annotations

from abc import abstractmethod
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import ClassVar

from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import StructType

from checkers.errors import describe_failure
from checkers.metrics._analyzer import Analyzer, State
from checkers.metrics._metric import EmptyStateError, Entity, Metric, MetricComputationError
from checkers.metrics._serde import state_kind


class SchemaAnalyzer(Analyzer):
    """An analyzer whose state comes from the schema alone: it costs no Spark job."""

    @abstractmethod
    def state_from_schema(self, schema: StructType) -> State:
        """The state of any data with this schema."""

    @abstractmethod
    def zero_state(self) -> State:
        """The identity of this analyzer's state monoid."""


class QueryAnalyzer(Analyzer):
    """An analyzer that runs a query of its own over the data (one Spark action); it has no
    per-partition state, since the query reads whatever data it is given as a whole."""

    @abstractmethod
    def state_from_data(self, df: DataFrame) -> State:
        """Run the query; raise `MetricComputationError` (or let Spark's error out) on failure."""

    @abstractmethod
    def zero_state(self) -> State:
        """The identity of this analyzer's state monoid."""


@state_kind("column_names")
@dataclass(frozen=True)
class ColumnNamesState:
    """The column names seen (sorted, a name repeated as often as a schema repeats it). Merging
    takes each name as often as the schema that has it most often: the columns of the union by
    name of the partitions, so partitions whose schema grew merge to the grown one."""

    names: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "names", tuple(sorted(self.names)))  # a stored list, too

    @classmethod
    def zero(cls) -> ColumnNamesState:
        return cls()

    def merge(self, other: ColumnNamesState) -> ColumnNamesState:
        return ColumnNamesState(tuple((Counter(self.names) | Counter(other.names)).elements()))


@dataclass(frozen=True, repr=False)
class ColumnCount(SchemaAnalyzer):
    """Number of columns of the dataset, read from its schema (no Spark job).

    The state is the column names, so merged partitions count the columns of their union by
    name (Deequ's state is the number itself, and merging two partitions adds their counts)."""

    entity_kind: ClassVar[Entity] = Entity.DATASET

    def state_from_schema(self, schema: StructType) -> ColumnNamesState:
        return ColumnNamesState(tuple(schema.fieldNames()))

    def zero_state(self) -> ColumnNamesState:
        return ColumnNamesState.zero()

    def compute_value(self, state: ColumnNamesState) -> float:  # type: ignore[override]
        return float(len(state.names))


@state_kind("custom_sql")
@dataclass(frozen=True)
class CustomSqlState:
    """A statement's value and how many runs (over separate data) are in the state.

    A statement's result cannot be combined across partitions in general (an average, a
    maximum of a ratio), so merging two non-empty states keeps no value: the state stays a
    lawful monoid (runs add up) and its metric says why it has no value."""

    value: float | None = None
    runs: int = 0

    @classmethod
    def zero(cls) -> CustomSqlState:
        return cls()

    def merge(self, other: CustomSqlState) -> CustomSqlState:
        if not other.runs:
            return self
        if not self.runs:
            return other
        return CustomSqlState(None, self.runs + other.runs)


@dataclass(frozen=True, repr=False)
class CustomSql(QueryAnalyzer):
    """The single numeric value a SQL statement returns, e.g.
    `CustomSql("SELECT count(*) FROM primary WHERE amount < 0")`.

    The run's data is registered as the temporary view `view` ("primary", as in AWS Glue's
    DQDL) before the statement runs, replacing a view of that name in the session; with
    `view=None` the statement runs as written on the session's tables (Deequ's behaviour: the
    user registers the views). `disambiguator` is the metric's instance, to tell statements
    apart in a metrics history. The statement must return one row of one column castable to a
    double; another shape, a NULL value or bad SQL is an error metric."""

    expression: str
    view: str | None = "primary"
    disambiguator: str = "*"
    entity_kind: ClassVar[Entity] = Entity.DATASET

    def __post_init__(self) -> None:
        if not self.expression.strip():
            raise ValueError("CustomSql needs a SQL statement")

    @property
    def metric_name(self) -> str:
        return "CustomSQL"  # Deequ's metric name

    @property
    def instance(self) -> str:
        return self.disambiguator

    def state_from_data(self, df: DataFrame) -> CustomSqlState:
        if self.view is not None:
            df.createOrReplaceTempView(self.view)
        result = df.sparkSession.sql(self.expression)
        if len(result.columns) != 1:
            raise MetricComputationError(
                f"{self!r}: the statement returned {len(result.columns)} columns; "
                "it must return exactly one"
            )
        value = result.toDF("value").select(F.col("value").cast("double"))
        rows = value.limit(2).collect()  # two are enough to tell "more than one"
        if len(rows) != 1:
            shape = "no rows" if not rows else "more than one row"
            raise MetricComputationError(
                f"{self!r}: the statement returned {shape}; it must return exactly one"
            )
        if rows[0][0] is None:
            raise MetricComputationError(f"{self!r}: the statement returned NULL")
        return CustomSqlState(float(rows[0][0]), 1)

    def zero_state(self) -> CustomSqlState:
        return CustomSqlState.zero()

    def compute_value(self, state: CustomSqlState) -> float:  # type: ignore[override]
        if state.runs == 0:
            raise EmptyStateError(f"Empty state for {self!r}: the statement has not run")
        if state.value is None:
            raise MetricComputationError(
                f"{self!r}: the results of {state.runs} runs over separate data (partitions) "
                "cannot be combined; run the statement over the whole data instead"
            )
        return state.value


def run_standalone(
    df: DataFrame, analyzers: Sequence[Analyzer], previous: Mapping[Analyzer, State]
) -> tuple[dict[Analyzer, Metric], dict[Analyzer, State], int]:
    """Metrics and states of the schema and query analyzers among `analyzers` (merged with
    `previous` states), and the Spark actions their queries took; a failing query is an error
    metric of its analyzer only."""
    metrics: dict[Analyzer, Metric] = {}
    states: dict[Analyzer, State] = {}
    actions = 0
    for analyzer in analyzers:
        if isinstance(analyzer, SchemaAnalyzer):
            state = analyzer.state_from_schema(df.schema)
        elif isinstance(analyzer, QueryAnalyzer):
            actions += 1
            try:
                state = analyzer.state_from_data(df)
            except MetricComputationError as exc:
                metrics[analyzer] = Metric(analyzer, error=str(exc))
                continue
            except Exception as exc:  # bad SQL, a failed job: this analyzer's error only
                metrics[analyzer] = Metric(analyzer, error=f"{analyzer!r}: {describe_failure(exc)}")
                continue
        else:
            continue
        states[analyzer] = state
        merged = state.merge(previous[analyzer]) if analyzer in previous else state
        metrics[analyzer] = analyzer.metric_from_state(merged)
    return metrics, states, actions
