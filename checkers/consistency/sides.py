"""The two sides of a consistency comparison, each answering in its own engine: a database table
through SQLAlchemy (PostgreSQL, MariaDB/MySQL, SQLite) or a Spark DataFrame (files, tables, a
JDBC read). Both answer the same four questions: key bounds, per-cell counts and checksums over
key ranges, duplicated keys, and the rows of small ranges (the only rows that move)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import sqlalchemy as sa
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from checkers._keys import quoted
from checkers.consistency import normalise
from checkers.consistency.normalise import Kind, Rules
from checkers.deadlines import current, timed_out
from checkers.metrics._scan import describe_failure
from checkers.parsers._base import Lazy, SourceError, resolve
from checkers.parsers._sql_timeouts import engine_within
from checkers.redaction import redact_url

#: A half-open key range [start, stop).
Range = tuple[int, int]
#: A cell's row count and the two sums of its rows' hash halves.
Cell = tuple[int, int, int]
#: Ranges per statement: long OR lists are slow to plan.
_RANGES_PER_QUERY = 256
#: What keeps PostgreSQL and MariaDB from merging a subquery into the query around it.
_FENCES = {"postgresql": " OFFSET 0", "mysql": " LIMIT 18446744073709551615"}
_FENCES["mariadb"] = _FENCES["mysql"]
#: Duplicated keys listed (beyond that, only counted).
DUPLICATES_LISTED = 1000


@dataclass(frozen=True)
class Selection:
    """Which rows a question is about: all of them, or the keys of `ranges`, each a union of
    grid cells `unit` keys wide counted from `low` (so a cell number picks them too)."""

    ranges: tuple[Range, ...] | None
    low: int = 0
    unit: int = 1

    def cells(self) -> list[int]:
        assert self.ranges is not None
        return [
            c
            for a, b in self.ranges
            for c in range((a - self.low) // self.unit, (b - self.low) // self.unit)
        ]


ALL = Selection(None)


@dataclass(frozen=True)
class Bounds:
    low: int | None
    high: int | None
    rows: int
    null_keys: int


@dataclass(frozen=True)
class Fetched:
    """A row of a small range: its key, each column's canonical text, and float columns' values."""

    key: int
    texts: tuple[str | None, ...]
    floats: tuple[float | None, ...]


class Side(ABC):
    """One source being compared; `rows_fetched` and `queries` count what it sent back."""

    role: str = "left"

    def __init__(self) -> None:
        self.rows_fetched = 0
        self.queries = 0

    @abstractmethod
    def describe(self) -> str: ...

    @abstractmethod
    def kinds(self) -> dict[str, Kind]:
        """Each column's kind (ValueError for a type the comparison cannot normalise)."""

    def has_unique_key(self, key: str) -> bool:
        """True when the engine guarantees `key` is unique (no need to look for duplicates)."""
        return False

    @abstractmethod
    def bounds(self, key: str) -> Bounds: ...

    @abstractmethod
    def cells(
        self, key: str, plan: RowPlan, selected: Selection, low: int, width: int
    ) -> dict[int, Cell]:
        """Count and checksum the selected rows by cell `(key - low) div width`."""

    @abstractmethod
    def duplicates(self, key: str) -> tuple[int, dict[int, int]]:
        """How many keys occur more than once, and up to DUPLICATES_LISTED of them with counts."""

    @abstractmethod
    def rows(self, key: str, plan: RowPlan, selected: Selection) -> list[Fetched]: ...

    @contextmanager
    def session(self) -> Iterator[None]:
        yield


@dataclass(frozen=True)
class RowPlan:
    """What is compared: the columns (in order), their kinds on this side, and the rules."""

    columns: tuple[str, ...]
    kinds: tuple[Kind, ...]
    rules: Rules

    @property
    def float_columns(self) -> tuple[str, ...]:
        return tuple(c for c, k in zip(self.columns, self.kinds, strict=True) if k == "float")


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
        try:
            with engine.connect() as connection:
                self._connection = connection
                yield
        except sa.exc.SQLAlchemyError as exc:
            if deadline.expired:
                message = timed_out(self.describe(), deadline.seconds)
                raise SourceError(f"{message}: {_reason(exc)}") from exc
            raise SourceError(f"{self.describe()}: {_reason(exc)}") from exc
        finally:
            self._connection = None
            engine.dispose()

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
        return list(self._connection.execute(sa.text(statement)))

    @cached_property
    def _columns(self) -> list[dict[str, Any]]:
        assert self._connection is not None
        schema, name = self._relation
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
                found[column["name"]] = _Unsupported(str(exc))  # type: ignore[assignment]
        return found

    def has_unique_key(self, key: str) -> bool:
        assert self._connection is not None
        schema, name = self._relation
        inspector = sa.inspect(self._connection)
        if self.table.where is None and inspector.get_pk_constraint(name, schema=schema).get(
            "constrained_columns"
        ) == [key]:
            return True
        uniques = inspector.get_unique_constraints(name, schema=schema)
        indexes = [i for i in inspector.get_indexes(name, schema=schema) if i.get("unique")]
        return any(u.get("column_names") == [key] for u in [*uniques, *indexes])

    def bounds(self, key: str) -> Bounds:
        k = self._quote(key)
        statement = f"SELECT min({k}), max({k}), count(*), count({k}) FROM {self._from}"
        low, high, rows, keyed = self._execute(statement + self._where())[0]
        return Bounds(_int(low), _int(high), int(rows), int(rows) - int(keyed))

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
        named = [f"dq_t{n}" for n in range(len(texts))]
        # Texts, then their digest, then its halves, each computed once: the fences keep the
        # database from inlining a subquery into the next (which would compute them again).
        fence = _FENCES.get(dialect, "")
        h1, h2 = normalise.sql_halves(dialect, "dq_m")
        division = "DIV" if dialect in ("mysql", "mariadb") else "/"
        found: dict[int, Cell] = {}
        for chunk in _chunks(selected):
            listed = ", ".join(f"{t} AS {n}" for t, n in zip(texts, named, strict=True))
            rows = (
                f"SELECT {k} AS dq_k, {listed} FROM {self._from}"
                f"{self._where(self._ranges(key, chunk))}{fence}"
            )
            digests = (
                f"SELECT dq_k, {normalise.sql_digest(dialect, named)} AS dq_m "
                f"FROM ({rows}) dq_rows{fence}"
            )
            halves = (
                f"SELECT (dq_k - {low}) {division} {width} AS cell, {h1} AS h1, {h2} AS h2 "
                f"FROM ({digests}) dq_digests"
            )
            statement = (
                f"SELECT cell, count(*), sum(h1), sum(h2) FROM ({halves}) cells GROUP BY cell"
            )
            for cell, count, s1, s2 in self._execute(statement):
                found[int(cell)] = (int(count), int(s1), int(s2))
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
            fetched += [_fetched(row, texts) for row in self._execute(statement)]
        self.rows_fetched += len(fetched)
        return fetched


class SparkSide(Side):
    """A DataFrame: its engine is Spark (files, tables, a JDBC read)."""

    def __init__(self, frame: DataFrame, role: str, source: str | None = None) -> None:
        super().__init__()
        self.frame = frame
        self.role = role
        self.source = source or "the DataFrame"

    def describe(self) -> str:
        return self.source

    def kinds(self) -> dict[str, Kind]:
        found: dict[str, Kind] = {}
        for item in self.frame.schema.fields:
            try:
                found[item.name] = normalise.kind_of_spark(item.dataType)
            except ValueError as exc:
                found[item.name] = _Unsupported(str(exc))  # type: ignore[assignment]
        return found

    def _collect(self, frame: DataFrame) -> list[Any]:
        self.queries += 1
        try:
            return frame.collect()
        except Exception as exc:
            raise SourceError(f"{self.describe()}: {describe_failure(exc)}") from exc

    def bounds(self, key: str) -> Bounds:
        k = F.col(quoted(key))
        row = self._collect(self.frame.agg(F.min(k), F.max(k), F.count(F.lit(1)), F.count(k)))[0]
        return Bounds(_int(row[0]), _int(row[1]), int(row[2]), int(row[2]) - int(row[3]))

    def _selected(self, key: str, selected: Selection) -> DataFrame:
        """The selected rows: a set of cell numbers (one hash lookup per row), not a chain of
        range conditions, which Spark evaluates slowly once there are hundreds."""
        if selected.ranges is None:
            return self.frame
        cell = F.expr(f"(CAST({quoted(key)} AS BIGINT) - {selected.low}) div {selected.unit}")
        return self.frame.filter(cell.isin(selected.cells()))

    def _texts(self, plan: RowPlan) -> list[Column]:
        return [
            normalise.spark_text(F.col(quoted(c)), kind, plan.rules)
            for c, kind in zip(plan.columns, plan.kinds, strict=True)
        ]

    def cells(
        self, key: str, plan: RowPlan, selected: Selection, low: int, width: int
    ) -> dict[int, Cell]:
        k = F.col(quoted(key))
        texts = [normalise.spark_text(k, "integer", plan.rules), *self._texts(plan)]
        named = [f"dq_t{n}" for n in range(len(texts))]
        cell = F.expr(f"(CAST(dq_k AS BIGINT) - {low}) div {width}")  # exact, >= 0
        h1, h2 = normalise.spark_halves(F.col("dq_m"))
        # Projections one after the other: Spark keeps an expensive expression used twice (a
        # text, the digest) in its own projection rather than computing it twice.
        frame = self._selected(key, selected).select(
            k.alias("dq_k"), *[t.alias(n) for t, n in zip(texts, named, strict=True)]
        )
        digest = normalise.spark_digest([F.col(n) for n in named])
        frame = frame.select("dq_k", digest.alias("dq_m"))
        frame = frame.select(
            cell.alias("cell"), h1.cast("long").alias("h1"), h2.cast("long").alias("h2")
        )
        grouped = frame.groupBy("cell").agg(F.count(F.lit(1)), F.sum("h1"), F.sum("h2"))
        return {int(r[0]): (int(r[1]), int(r[2]), int(r[3])) for r in self._collect(grouped)}

    def duplicates(self, key: str) -> tuple[int, dict[int, int]]:
        k = F.col(quoted(key))
        grouped = self.frame.filter(k.isNotNull()).groupBy(k.alias("k")).count()
        grouped = grouped.filter(F.col("count") > 1)
        listed = self._collect(grouped.orderBy("k").limit(DUPLICATES_LISTED))
        total = len(listed)
        if total == DUPLICATES_LISTED:
            total = int(self._collect(grouped.agg(F.count(F.lit(1))))[0][0])
        return total, {int(r[0]): int(r[1]) for r in listed}

    def rows(self, key: str, plan: RowPlan, selected: Selection) -> list[Fetched]:
        k = F.col(quoted(key))
        floats = [F.col(quoted(c)).cast("double") for c in plan.float_columns]
        frame = self._selected(key, selected).select(k, *self._texts(plan), *floats)
        fetched = [_fetched(row, len(plan.columns)) for row in self._collect(frame)]
        self.rows_fetched += len(fetched)
        return fetched


class _Unsupported(str):
    """A column kind the comparison cannot normalise, and why (an error only if compared)."""


def is_unsupported(kind: object) -> bool:
    return isinstance(kind, _Unsupported)


def _fetched(row: Sequence[Any], texts: int) -> Fetched:
    return Fetched(
        int(row[0]), tuple(row[1 : 1 + texts]), tuple(_float(v) for v in row[1 + texts :])
    )


def _double(dialect: str) -> str:
    return {"postgresql": "double precision", "sqlite": "REAL"}.get(dialect, "DOUBLE")


def _int(value: object) -> int | None:
    return None if value is None else int(value)  # type: ignore[call-overload]


def _float(value: object) -> float | None:
    return None if value is None else float(value)  # type: ignore[arg-type]


def _reason(exc: Exception) -> str:
    text = str(getattr(exc, "orig", None) or exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


def as_side(source: SqlTable | DataFrame | Side, role: str) -> Side:
    if isinstance(source, Side):
        source.role = role
        return source
    if isinstance(source, SqlTable):
        return SqlSide(source, role)
    if isinstance(source, DataFrame) or hasattr(source, "schema"):
        return SparkSide(source, role)  # type: ignore[arg-type]
    raise ValueError(
        f"the {role} side is {type(source).__name__}: give a SqlTable(url, table) or a DataFrame"
    )
