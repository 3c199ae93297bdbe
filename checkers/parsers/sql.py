"""Parser for a SQL query through SQLAlchemy (any database it reaches: SQLite, PostgreSQL,
MariaDB...). Values go in as bound parameters, never into the query text. Partitioned by a
column, partitions are listed by an aggregate that runs in the database."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import ClassVar

import sqlalchemy as sa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.types import StructType

from checkers.deadlines import current, timed_out
from checkers.parsers import _column_partitions as columns
from checkers.parsers._base import (
    Lazy,
    Parser,
    SourceError,
    SourceIdentity,
    promised_struct,
    resolve,
)
from checkers.parsers._records import records_frame
from checkers.parsers._sql_timeouts import engine_within
from checkers.parsers.partitions import PARTITION_COLUMN, Partition, PartitionColumn, Partitioning
from checkers.redaction import redact_url

#: Builds a statement for the connected database's dialect (its identifier quoting).
_Statement = Callable[[sa.Dialect], str]
_INDEX = "__dq_index"
#: Names of the bound partition values in `read_partitions`.
_RESERVED = re.compile(r"__p\d+")


@dataclass(frozen=True)
class SqlQueryParser(Parser):
    """Rows of `query` (with `:name` placeholders bound from `params`) as a DataFrame. `url` is a
    SQLAlchemy URL or a function returning one (read secrets from the environment there). The
    result is collected through the driver: meant for operational queries and aggregates, not for
    bulk extraction. Promise a `schema` to fix column types. Connect and statement timeouts
    follow the source's deadline on PostgreSQL, MariaDB/MySQL and SQLite.

    >>> SqlQueryParser(lambda: os.environ["OPS_DB_URL"],
    ...     "SELECT max(ingested_at) AS latest FROM flights WHERE origin = :origin",
    ...     params=(("origin", "JFK"),), schema="latest timestamp")

    With `partitioning=PartitionColumn(column, changed=...)`, the database counts the rows and
    takes the maximum of `changed` per value of `column` (no rows move), and reading partitions
    fetches only their rows. Promise the partition column's type in `schema` to pin how its
    values render in keys.
    """

    url: Lazy
    query: str
    params: tuple[tuple[str, object], ...] = field(default=())
    schema: str | StructType | None = None
    deadline_s: float | None = field(default=None, kw_only=True)
    partitioning: Partitioning | None = field(default=None, kw_only=True)
    casts_to_promise: ClassVar[bool] = True
    partitioning_kind: ClassVar[type[Partitioning] | None] = PartitionColumn

    def __post_init__(self) -> None:
        super().__post_init__()
        if isinstance(self.params, Mapping):
            object.__setattr__(self, "params", tuple(sorted(self.params.items())))
        if self.partitioning is not None and (
            reserved := [n for n, _ in self.params if _RESERVED.fullmatch(n)]
        ):
            raise ValueError(
                f"parameters {reserved} are reserved for partition values: rename them"
            )

    def read(self, spark: SparkSession) -> DataFrame:
        names, rows = self._fetch(lambda _: self.query, {})
        return records_frame(spark, [dict(r._mapping) for r in rows], names, self.schema)

    def describe(self) -> str:
        return f"SQL query on {redact_url(resolve(self.url))}"

    def source_identity(self) -> SourceIdentity:
        return SourceIdentity.of_query(self.query, "its query's tables")

    def _fetch(
        self, statement: _Statement, extra: Mapping[str, object]
    ) -> tuple[list[str], list[sa.Row[tuple[object, ...]]]]:
        """Column names and rows of a statement, within the source's deadline."""
        url = resolve(self.url)
        deadline = current(self.deadline_s)
        engine = engine_within(url, deadline)
        try:
            with engine.connect() as connection:
                text = sa.text(statement(engine.dialect))
                result = connection.execute(text, {**dict(self.params), **extra})
                return list(result.keys()), list(result)
        except sa.exc.SQLAlchemyError as exc:
            reason = str(getattr(exc, "orig", None) or exc).strip().splitlines()[0]
            if deadline.expired:
                message = timed_out(self.describe(), deadline.seconds)
                raise SourceError(f"{message}: {reason}") from exc
            raise SourceError(f"query on {redact_url(url)} failed: {reason}") from exc
        finally:
            engine.dispose()

    def _subquery(self) -> str:
        # On its own line: a trailing "-- comment" in the query must not swallow the parenthesis.
        return "(\n" + self.query.strip().rstrip(";").rstrip() + "\n)"

    def _list_partitions(self, spark: SparkSession) -> list[Partition]:
        assert isinstance(self.partitioning, PartitionColumn)
        column, changed = self.partitioning.column, self.partitioning.changed

        def aggregate(dialect: sa.Dialect) -> str:
            c, m = (dialect.identifier_preparer.quote(n) for n in (column, changed))
            return (
                f"SELECT q.{c} AS dq_value, count(*) AS dq_rows, max(q.{m}) AS dq_latest "
                f"FROM {self._subquery()} AS q GROUP BY q.{c}"
            )

        _, rows = self._fetch(aggregate, {})
        if not rows:
            return []
        raw = [tuple(r) for r in rows]
        # Keys render in Spark, from the values typed as a read types them, so they match reads.
        frame = records_frame(
            spark,
            [{column: value, _INDEX: n} for n, (value, _, _) in enumerate(raw)],
            [column, _INDEX],
            self._column_promise(spark, column),
        )
        found = []
        for group, row in columns.groups(frame, column, column, _INDEX):
            value, count, latest = raw[row[_INDEX]]
            found.append(
                Partition(group.key, columns.fingerprint(count, latest), group.ts, value=value)
            )
        return found

    def _column_promise(self, spark: SparkSession, column: str) -> StructType | None:
        if self.schema is None:
            return None
        promised = promised_struct(spark, self.schema)
        fields = [f for f in promised.fields if f.name.lower() == column.lower()]
        return StructType(fields) if fields else None

    def _read_partitions(self, spark: SparkSession, partitions: list[Partition]) -> DataFrame:
        assert isinstance(self.partitioning, PartitionColumn)
        column = self.partitioning.column
        values = [p.value for p in partitions if p.value is not None]
        bound = {f"__p{n}": v for n, v in enumerate(values)}

        def chosen(dialect: sa.Dialect) -> str:
            c = dialect.identifier_preparer.quote(column)
            keep = [f"q.{c} IN ({', '.join(':' + name for name in bound)})"] if bound else []
            if len(values) < len(partitions):
                keep.append(f"q.{c} IS NULL")
            where = " OR ".join(keep) or "1 = 0"
            return f"SELECT * FROM {self._subquery()} AS q WHERE {where}"

        names, rows = self._fetch(chosen, bound)
        frame = records_frame(spark, [dict(r._mapping) for r in rows], names, self.schema)
        return frame.withColumn(PARTITION_COLUMN, columns.key_of(column, columns.quoted(column)))
