"""The database side of a consistency comparison: a table compared inside PostgreSQL,
MariaDB/MySQL or SQLite through SQLAlchemy, within the source deadline."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import sqlalchemy as sa

from checkers.consistency import normalise
from checkers.consistency.normalise import Kind
from checkers.consistency.sides import (
    DUPLICATES_LISTED,
    Bounds,
    Cell,
    Fetched,
    Range,
    RowPlan,
    Selection,
    Side,
    Unsupported,
    as_int,
    fetched_row,
)
from checkers.deadlines import Deadline, current, timed_out
from checkers.parsers._base import Lazy, SourceError, resolve
from checkers.parsers._sql_timeouts import engine_within
from checkers.redaction import redact_url

#: Ranges per statement: long OR lists are slow to plan.
_RANGES_PER_QUERY = 256
#: What keeps PostgreSQL from merging the subquery of texts into the query around it, which
#: would render a text column twice (for its length and its value). Measured at 10M rows,
#: MariaDB is faster rendering twice than materialising the subquery, so it gets no fence.
_FENCES = {"postgresql": " OFFSET 0"}


def _chunks(selected: Selection) -> Iterator[Sequence[Range] | None]:
    if selected.ranges is None:
        yield None
        return
    for start in range(0, len(selected.ranges), _RANGES_PER_QUERY):
        yield selected.ranges[start : start + _RANGES_PER_QUERY]


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


class SqlSide(Side):
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

    @property
    def _from(self) -> str:
        schema, name = self._relation
        quoted_name = (
            self._quote(name) if schema is None else f"{self._quote(schema)}.{self._quote(name)}"
        )
        return quoted_name

    def _where(self, *conditions: str) -> str:
        parts = [f"({self.table.where})"] if self.table.where else []
        parts += [c for c in conditions if c]
        return f" WHERE {' AND '.join(parts)}" if parts else ""

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

    def has_unique_key(self, key: str) -> bool:
        assert self._connection is not None
        schema, name = self._relation
        with self._reported():
            inspector = sa.inspect(self._connection)
            primary = inspector.get_pk_constraint(name, schema=schema).get("constrained_columns")
            if self.table.where is None and primary == [key]:
                return True
            uniques = inspector.get_unique_constraints(name, schema=schema)
            indexes = [i for i in inspector.get_indexes(name, schema=schema) if i.get("unique")]
        return any(u.get("column_names") == [key] for u in [*uniques, *indexes])

    def bounds(self, key: str) -> Bounds:
        k = self._quote(key)
        statement = f"SELECT min({k}), max({k}), count(*), count({k}) FROM {self._from}"
        low, high, rows, keyed = self._execute(statement + self._where())[0]
        return Bounds(as_int(low), as_int(high), int(rows), int(rows) - int(keyed))

    def _ranges(self, key: str, ranges: Sequence[Range] | None) -> str:
        if ranges is None:
            return ""
        k = self._quote(key)
        return "(" + " OR ".join(f"({k} >= {a} AND {k} < {b})" for a, b in ranges) + ")"

    def _texts(self, plan: RowPlan) -> list[str]:
        return [
            normalise.sql_text(self._dialect, self._quote(c), kind, plan.rules)
            for c, kind in zip(plan.columns, plan.kinds, strict=True)
        ]

    def cells(
        self, key: str, plan: RowPlan, selected: Selection, low: int, width: int
    ) -> dict[int, Cell]:
        k = self._quote(key)
        dialect = self._dialect
        texts = [normalise.sql_text(dialect, k, "integer", plan.rules), *self._texts(plan)]
        text_kinds = [False, *(kind == "text" for kind in plan.kinds)]
        division = "DIV" if dialect in ("mysql", "mariadb") else "/"
        cell = f"({k} - {low}) {division} {width}"
        fence = _FENCES.get(dialect)
        named = [f"dq_t{n}" for n in range(len(texts))] if fence else texts
        checksum = normalise.sql_checksum(dialect, normalise.sql_digest(dialect, named, text_kinds))

        def statement(where: str) -> str:
            if fence is None:
                source = f"{self._from}{where}"
                return f"SELECT {cell} AS dq_c, count(*), {checksum} FROM {source} GROUP BY dq_c"
            # The texts once, in a subquery, and the digest over their names.
            listed = ", ".join(f"{t} AS {n}" for t, n in zip(texts, named, strict=True))
            rows = f"SELECT {cell} AS dq_c, {listed} FROM {self._from}{where}{fence}"
            return f"SELECT dq_c, count(*), {checksum} FROM ({rows}) dq_rows GROUP BY dq_c"

        found: dict[int, Cell] = {}
        for chunk in _chunks(selected):
            for number, count, total in self._execute(
                statement(self._where(self._ranges(key, chunk)))
            ):
                found[int(number)] = (int(count), int(total))
        return found

    def duplicates(self, key: str) -> tuple[int, dict[int, int]]:
        k = self._quote(key)
        grouped = (
            f"SELECT {k} AS k, count(*) AS n FROM {self._from}{self._where(f'{k} IS NOT NULL')} "
            f"GROUP BY {k} HAVING count(*) > 1"
        )
        listed = self._execute(f"{grouped} ORDER BY {k} LIMIT {DUPLICATES_LISTED}")
        total = len(listed)
        if total == DUPLICATES_LISTED:
            total = int(self._execute(f"SELECT count(*) FROM ({grouped}) d")[0][0])
        return total, {int(k): int(n) for k, n in listed}

    def rows(self, key: str, plan: RowPlan, selected: Selection) -> list[Fetched]:
        k = self._quote(key)
        floats = [f"CAST({self._quote(c)} AS {_double(self._dialect)})" for c in plan.float_columns]
        columns = ", ".join([k, *self._texts(plan), *floats])
        fetched: list[Fetched] = []
        texts = len(plan.columns)
        for chunk in _chunks(selected):
            statement = f"SELECT {columns} FROM {self._from}{self._where(self._ranges(key, chunk))}"
            fetched += [fetched_row(row, texts) for row in self._execute(statement)]
        self.rows_fetched += len(fetched)
        return fetched


def _double(dialect: str) -> str:
    return {"postgresql": "double precision", "sqlite": "REAL"}.get(dialect, "DOUBLE")


def _reason(exc: Exception) -> str:
    text = str(getattr(exc, "orig", None) or exc).strip().splitlines()
    return text[0] if text else type(exc).__name__
