"""The database side of a consistency comparison: a table compared inside PostgreSQL,
MariaDB/MySQL or SQLite through SQLAlchemy, within the source deadline (the statements are
sql_questions')."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import sqlalchemy as sa

from checkers.consistency import normalise
from checkers.consistency.normalise import Kind
from checkers.consistency.sides import KeyPlan, Unsupported
from checkers.consistency.sql_questions import SqlQuestions
from checkers.deadlines import Deadline, current, timed_out
from checkers.parsers._base import Lazy, SourceError, resolve
from checkers.parsers._sql_timeouts import engine_within
from checkers.redaction import redact_url


@dataclass(frozen=True)
class SqlTable:
    """A database table (or view) compared where it lives: `url` is a SQLAlchemy URL or a
    function returning one (read secrets from the environment there), `table` may be qualified
    with its schema (`sales.orders`), `where` keeps a subset (SQL of that database). Statements
    time out by the source deadline (`deadline_s`, else the run's `DQ_SOURCE_DEADLINE_S`)."""

    url: Lazy
    table: str
    where: str | None = None
    deadline_s: float | None = field(default=None, kw_only=True)

    def describe(self) -> str:
        try:
            shown = redact_url(resolve(self.url))
        except Exception:
            shown = "<database url>"
        return f"table {self.table} on {shown}"


class SqlSide(SqlQuestions):
    def __init__(self, table: SqlTable, role: str) -> None:
        super().__init__()
        self.table = table
        self.role = role
        self._engine: sa.Engine | None = None
        self._connection: sa.Connection | None = None
        self._deadline: Deadline | None = None

    def describe(self) -> str:
        return self.table.describe()

    @contextmanager
    def session(self) -> Iterator[None]:
        deadline = current(self.table.deadline_s)
        try:
            url = resolve(self.table.url)
            engine = engine_within(url, deadline)
        except ModuleNotFoundError as exc:
            raise SourceError(
                f"{self.describe()}: its Python driver is not installed (no module "
                f"{exc.name!r}): install it beside dq-checkers, or use a driver that is "
                "(postgresql+psycopg, mysql+pymysql, sqlite)"
            ) from exc
        except Exception as exc:
            raise SourceError(f"{self.describe()}: {_reason(exc)}") from exc
        dialect = engine.dialect.name
        sa.event.listen(
            engine, "connect", lambda dbapi, _record: normalise.prepare_connection(dialect, dbapi)
        )
        self._engine = engine
        self._deadline = deadline
        try:
            with self._reported(), engine.connect() as connection:
                self._connection = connection
                yield
        finally:
            self._connection = None
            engine.dispose()

    @contextmanager
    def _reported(self) -> Iterator[None]:
        """A database error as a SourceError naming the table (and the deadline if it passed)."""
        try:
            yield
        except sa.exc.SQLAlchemyError as exc:
            deadline = self._deadline
            if deadline is not None and deadline.expired:
                message = timed_out(self.describe(), deadline.seconds)
                raise SourceError(f"{message}: {_reason(exc)}") from exc
            raise SourceError(f"{self.describe()}: {_reason(exc)}") from exc

    @property
    def _dialect(self) -> str:
        assert self._engine is not None
        return self._engine.dialect.name

    def _quote(self, name: str) -> str:
        assert self._engine is not None
        return self._engine.dialect.identifier_preparer.quote(name)

    @cached_property
    def _relation(self) -> tuple[str | None, str]:
        schema, dot, name = self.table.table.rpartition(".")
        return (schema or None) if dot else None, name

    def _source(self) -> str:
        schema, name = self._relation
        if schema is None:
            return self._quote(name)
        return f"{self._quote(schema)}.{self._quote(name)}"

    def _condition(self) -> str | None:
        return self.table.where

    def _execute(self, statement: str) -> list[Any]:
        assert self._connection is not None
        self.queries += 1
        with self._reported():
            return list(self._connection.execute(sa.text(statement)))

    @cached_property
    def _columns(self) -> list[dict[str, Any]]:
        assert self._connection is not None
        schema, name = self._relation
        with self._reported():
            inspector = sa.inspect(self._connection)
            if not inspector.has_table(name, schema=schema):
                raise SourceError(f"{self.describe()}: no such table")
            return [dict(c) for c in inspector.get_columns(name, schema=schema)]

    def kinds(self) -> dict[str, Kind]:
        found: dict[str, Kind] = {}
        for column in self._columns:
            try:
                found[column["name"]] = normalise.kind_of_sql(column["type"])
            except ValueError as exc:
                found[column["name"]] = Unsupported(str(exc))  # type: ignore[assignment]
        return found

    def has_unique_key(self, key: KeyPlan) -> bool:
        assert self._connection is not None
        schema, name = self._relation
        columns = list(key.columns)
        with self._reported():
            inspector = sa.inspect(self._connection)
            primary = inspector.get_pk_constraint(name, schema=schema).get("constrained_columns")
            if self.table.where is None and primary == columns:
                return True
            uniques = inspector.get_unique_constraints(name, schema=schema)
            indexes = [i for i in inspector.get_indexes(name, schema=schema) if i.get("unique")]
        return any(u.get("column_names") == columns for u in [*uniques, *indexes])


def _reason(exc: Exception) -> str:
    text = str(getattr(exc, "orig", None) or exc).strip().splitlines()
    return text[0] if text else type(exc).__name__
