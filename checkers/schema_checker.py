"""`SchemaChecker`: a dataset's columns against a baseline schema (pinned, a parser's promise, an
earlier version of a table, or the schema recorded at the check's previous run). Each column is
an element: added, removed, retyped or with changed nullability fails. The schema comes from the
DataFrame's plan: no Spark job runs for sources whose schema is in metadata (table formats,
parsers given a schema)."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace

import sqlalchemy as sa
from pyspark.sql import DataFrame
from pyspark.sql.types import StructField, StructType
from sqlalchemy.engine import Engine

from checkers.checker import Checker, CheckerPlan, CheckerResult
from checkers.engine_tables import recorded_schemas as table
from checkers.metrics import Analyzer, Metric
from checkers.parsers.table_formats import TableFormatParser, declared_schema
from checkers.project_db import database_engine, utc_now
from checkers.tolerances import KnownBroken


@dataclass(frozen=True)
class ColumnChange:
    """One column that differs from the baseline: `change` is added, removed, type or
    nullability; `was` and `now` say how (a type name, "nullable"/"not null")."""

    column: str
    change: str
    was: str = ""
    now: str = ""

    def as_row(self) -> dict[str, object]:
        return {"column": self.column, "change": self.change, "was": self.was, "now": self.now}


def _nullability(field: StructField) -> str:
    return "nullable" if field.nullable else "not null"


def schema_changes(
    baseline: StructType, actual: StructType, *, nullability: bool = True
) -> list[ColumnChange]:
    """How `actual` differs from `baseline`, column by column (names compared case-insensitively,
    as Spark resolves them), in the order of the baseline, then added columns."""
    now = {f.name.lower(): f for f in actual.fields}
    was = {f.name.lower(): f for f in baseline.fields}
    changes = []
    for name, old in was.items():
        new = now.get(name)
        if new is None:
            changes.append(ColumnChange(old.name, "removed", old.dataType.simpleString()))
        elif new.dataType != old.dataType:
            changes.append(
                ColumnChange(
                    old.name, "type", old.dataType.simpleString(), new.dataType.simpleString()
                )
            )
        elif nullability and new.nullable != old.nullable:
            changes.append(
                ColumnChange(old.name, "nullability", _nullability(old), _nullability(new))
            )
    for name, new in now.items():
        if name not in was:
            changes.append(ColumnChange(new.name, "added", "", new.dataType.simpleString()))
    return changes


@dataclass(frozen=True)
class RecordedSchema:
    """Where a SchemaChecker without a baseline keeps the schema it saw: the project database
    (`url`, else `DQ_DATABASE_URL`, else .dq/dq.db), table `dq_schemas`, under `series` (the tick
    names it after the check when not given). One row per series: the latest run's schema."""

    series: str | None = None
    url: str | None = None

    @contextmanager
    def _engine(self) -> Iterator[Engine]:
        engine = database_engine(self.url)
        try:
            table.create(engine, checkfirst=True)  # in the project DB: migration 14
            yield engine
        finally:
            engine.dispose()

    def previous(self) -> StructType | None:
        """The schema the previous run recorded (None: this is the first run)."""
        with self._engine() as engine, engine.connect() as connection:
            found = connection.execute(
                sa.select(table.c.data_schema).where(table.c.series == self.series)
            ).scalar_one_or_none()
        return None if found is None else StructType.fromJson(json.loads(found))

    def record(self, schema: StructType) -> None:
        """Keep `schema` as the one the next run compares with."""
        values = {"data_schema": schema.json(), "recorded_at": utc_now()}
        with self._engine() as engine, engine.begin() as connection:
            updated = connection.execute(
                sa.update(table).where(table.c.series == self.series).values(**values)
            )
            if updated.rowcount == 0:
                connection.execute(sa.insert(table).values(series=self.series, **values))


class SchemaChecker(Checker):
    """The columns of `dataset` against `baseline` (a StructType, DDL text such as a parser's
    promised schema, or a Delta or Iceberg parser: its table's schema at the version it names,
    from metadata). A table format's columns are compared as its metadata declares them, NOT
    NULL included (Spark's file reader calls every column nullable). Without a baseline, against
    the schema recorded at the check's previous run (`recorded`, in the project database): the
    first run passes and records its schema, a change fails the run that first sees it, and
    that run records the new schema. Elements are columns, keyed by name, so
    `KnownBroken(["legacy_col"])` excuses an expected change.
    `nullability=False` ignores nullability changes (many sources report every column nullable).

    >>> SchemaChecker(DeltaParser("lake/orders").load(spark),
    ...               baseline=DeltaParser("lake/orders", version=41))
    >>> SchemaChecker(orders)  # in a check: against the schema its previous run saw
    """

    key = ("column",)

    def __init__(
        self,
        dataset: DataFrame,
        baseline: StructType | str | TableFormatParser | None = None,
        *,
        nullability: bool = True,
        recorded: RecordedSchema | None = None,
    ) -> None:
        self.dataset = dataset
        self.baseline = baseline
        self.nullability = nullability
        self.recorded = (
            recorded if recorded is not None or baseline is not None else RecordedSchema()
        )

    def name_series(self, check: str) -> None:
        """Record under the check's name unless a series was given (the tick calls this)."""
        if self.recorded is not None and self.recorded.series is None:
            self.recorded = replace(self.recorded, series=check)

    def _baseline(self) -> StructType | None:
        if self.baseline is None:
            assert self.recorded is not None
            if self.recorded.series is None:
                raise ValueError(
                    "a SchemaChecker without a baseline compares with the "
                    "previous run's schema: run it in a check (named after it) or pass "
                    "recorded=RecordedSchema('orders')"
                )
            return self.recorded.previous()
        if isinstance(self.baseline, StructType):
            return self.baseline
        if isinstance(self.baseline, TableFormatParser):
            return self.baseline.inspect().schema
        from checkers.parsers._base import promised_struct

        return promised_struct(self.dataset.sparkSession, self.baseline)

    def plan(self, excused: Sequence[KnownBroken] = ()) -> CheckerPlan:
        previous = self._baseline()
        excused_names = {
            str(k[0] if isinstance(k, tuple) else k).lower() for e in excused for k in e.keys
        }

        def finish(metrics: Mapping[Analyzer, Metric]) -> CheckerResult:
            actual = declared_schema(self.dataset) or self.dataset.schema
            baseline = actual if previous is None else previous  # a first run: nothing to miss
            if self.baseline is None and self.recorded is not None and previous != actual:
                self.recorded.record(actual)
            changes = schema_changes(baseline, actual, nullability=self.nullability)
            columns = {f.name.lower() for f in [*baseline.fields, *actual.fields]}
            unexcused = [c for c in changes if c.column.lower() not in excused_names]
            rows = [c.as_row() for c in [*unexcused, *(c for c in changes if c not in unexcused)]]
            keys: list[object] = [*sorted(c.column for c in (unexcused or changes))]
            return CheckerResult(
                failing=len(changes),
                total=len(columns),
                unexcused=len(unexcused),
                metrics={"changed_columns": len(changes)},
                fetch_sample=lambda limit: rows[:limit],
                fetch_keys=lambda limit: keys[:limit],
            )

        return CheckerPlan(self.dataset, [], finish)
