"""The questions of a comparison asked in SQL, inside the database: position bounds, per-cell
counts and checksums, duplicated keys, the rows of small ranges. Only their answers leave the
database. How a statement reaches it (SQLAlchemy in sql_side, Spark's JDBC source in jdbc_side)
is up to the side."""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Iterator, Sequence
from typing import Any

from checkers.consistency import normalise, sides
from checkers.consistency.sides import Key, KeyPlan, RowPlan, Selection

#: Ranges (or cells of a hashed key) per statement: long OR and IN lists are slow to plan.
_RANGES_PER_QUERY = 256
_CELLS_PER_QUERY = 1000
#: What keeps PostgreSQL from merging the subquery of texts into the query around it, which
#: would render a text column twice (for its length and its value). Measured at 10M rows,
#: MariaDB is faster rendering twice than materialising the subquery, so it gets no fence.
_FENCES = {"postgresql": " OFFSET 0"}


class SqlQuestions(sides.Side):
    """A side whose engine is a database: each question is one SQL statement (or a few, for long
    selections) over `_source()`, answered by `_execute`."""

    @property
    @abstractmethod
    def _dialect(self) -> str:
        """postgresql, mysql, mariadb or sqlite."""

    @abstractmethod
    def _quote(self, name: str) -> str: ...

    @abstractmethod
    def _source(self) -> str:
        """What FROM reads: a quoted table, or a parenthesised query with an alias."""

    @abstractmethod
    def _condition(self) -> str | None:
        """The side's own filter (SQL of its database), if any."""

    @abstractmethod
    def _execute(self, statement: str) -> list[Sequence[Any]]: ...

    def _where(self, *conditions: str) -> str:
        own = self._condition()
        parts = [f"({own})"] if own else []
        parts += [c for c in conditions if c]
        return f" WHERE {' AND '.join(parts)}" if parts else ""

    @property
    def _text_type(self) -> str:
        return "CHAR" if self._dialect in ("mysql", "mariadb") else "TEXT"

    def _key_texts(self, key: KeyPlan) -> list[str]:
        return [
            normalise.sql_text(self._dialect, self._quote(c), kind, key.rules)
            for c, kind in zip(key.columns, key.kinds, strict=True)
        ]

    def _position(self, key: KeyPlan) -> str:
        if not key.hashed:
            return self._quote(key.columns[0])
        digest = normalise.sql_digest(self._dialect, self._key_texts(key), key.text_kinds)
        return normalise.sql_position(self._dialect, digest)

    def _keyed(self, key: KeyPlan) -> str:
        return " AND ".join(f"{self._quote(c)} IS NOT NULL" for c in key.columns)

    def _key_outputs(self, key: KeyPlan) -> list[str]:
        """The key as fetched: the integer, or a hashed key's canonical texts."""
        if not key.hashed:
            return [self._quote(key.columns[0])]
        return self._key_texts(key)

    def _selections(self, key: KeyPlan, selected: Selection) -> Iterator[str]:
        """The selected rows, a condition per statement: key ranges (an index on the key serves
        them), or for a hashed key the cell numbers of its position (one computation per row)."""
        if selected.ranges is None:
            yield ""
            return
        if not key.hashed:
            k = self._quote(key.columns[0])
            for start in range(0, len(selected.ranges), _RANGES_PER_QUERY):
                chunk: Sequence[sides.Range] = selected.ranges[start : start + _RANGES_PER_QUERY]
                yield "(" + " OR ".join(f"({k} >= {a} AND {k} < {b})" for a, b in chunk) + ")"
            return
        cell = self._cell(key, selected.low, selected.unit)
        numbers = selected.cells()
        for start in range(0, len(numbers), _CELLS_PER_QUERY):
            listed = ", ".join(str(n) for n in numbers[start : start + _CELLS_PER_QUERY])
            yield f"{cell} IN ({listed})"

    def _cell(self, key: KeyPlan, low: int, width: int) -> str:
        division = "DIV" if self._dialect in ("mysql", "mariadb") else "/"
        return f"(({self._position(key)}) - {low}) {division} {width}"

    def _texts(self, plan: RowPlan) -> list[str]:
        return [
            normalise.sql_text(self._dialect, self._quote(c), kind, plan.rules)
            for c, kind in zip(plan.columns, plan.kinds, strict=True)
        ]

    #: Whether `bounds` also counts distinct positions, so that `unique_in_data` can answer
    #: whether the key is unique without a question of its own.
    counts_distinct = False
    unique_in_data = False

    def bounds(self, key: KeyPlan) -> sides.Bounds:
        position, keyed = self._position(key), self._keyed(key)
        # Distinct positions equal to keyed rows: no key twice (two keys sharing a hashed
        # position only ever lower the count, so a collision never hides a duplicate).
        distinct = (
            f", count(DISTINCT CASE WHEN {keyed} THEN {position} END) AS dq_distinct"
            if self.counts_distinct
            else ""
        )
        statement = (
            f"SELECT min(CASE WHEN {keyed} THEN {position} END) AS dq_lo,"
            f" max(CASE WHEN {keyed} THEN {position} END) AS dq_hi, count(*) AS dq_n,"
            f" count(CASE WHEN {keyed} THEN 1 END) AS dq_keyed{distinct} FROM {self._source()}"
        )
        low, high, rows, with_key, *counted = self._execute(statement + self._where())[0]
        self.unique_in_data = bool(counted) and int(counted[0]) == int(with_key)
        return sides.Bounds(
            sides.as_int(low), sides.as_int(high), int(rows), int(rows) - int(with_key)
        )

    def cells(
        self, key: KeyPlan, plan: RowPlan, selected: Selection, low: int, width: int
    ) -> dict[int, sides.Cell]:
        dialect = self._dialect
        texts = [*self._key_texts(key), *self._texts(plan)]
        text_kinds = [*key.text_kinds, *(kind == "text" for kind in plan.kinds)]
        cell = self._cell(key, low, width)
        fence = _FENCES.get(dialect)
        named = [f"dq_t{n}" for n in range(len(texts))] if fence else texts
        checksum = normalise.sql_checksum(dialect, normalise.sql_digest(dialect, named, text_kinds))
        total = f"CAST({checksum} AS {self._text_type}) AS dq_s"

        def statement(where: str) -> str:
            if fence is None:
                source = f"{self._source()}{where}"
                return (
                    f"SELECT {cell} AS dq_c, count(*) AS dq_n, {total} FROM {source} GROUP BY dq_c"
                )
            # The texts once, in a subquery, and the digest over their names.
            listed = ", ".join(f"{t} AS {n}" for t, n in zip(texts, named, strict=True))
            rows = f"SELECT {cell} AS dq_c, {listed} FROM {self._source()}{where}{fence}"
            return f"SELECT dq_c, count(*) AS dq_n, {total} FROM ({rows}) dq_rows GROUP BY dq_c"

        found: dict[int, sides.Cell] = {}
        for chosen in self._selections(key, selected):
            for number, count, summed in self._execute(
                statement(self._where(self._keyed(key), chosen))
            ):
                found[int(number)] = (int(count), int(summed))
        return found

    def duplicates(self, key: KeyPlan) -> tuple[int, dict[Key, int]]:
        outputs = self._key_outputs(key)
        names = [f"dq_k{n}" for n in range(len(outputs))]
        listed_keys = ", ".join(f"{o} AS {n}" for o, n in zip(outputs, names, strict=True))
        grouped = (
            f"SELECT {listed_keys}, count(*) AS dq_n FROM {self._source()}"
            f"{self._where(self._keyed(key))} GROUP BY {', '.join(outputs)}"
            " HAVING count(*) > 1"
        )
        listed = self._execute(
            f"{grouped} ORDER BY {', '.join(names)} LIMIT {sides.DUPLICATES_LISTED}"
        )
        total = len(listed)
        if total == sides.DUPLICATES_LISTED:
            total = int(self._execute(f"SELECT count(*) AS dq_n FROM ({grouped}) dq_d")[0][0])
        return total, {sides.key_of(row, key): int(row[-1]) for row in listed}

    def rows(self, key: KeyPlan, plan: RowPlan, selected: Selection) -> list[sides.Fetched]:
        double = {"postgresql": "double precision", "sqlite": "REAL"}.get(self._dialect, "DOUBLE")
        floats = [f"CAST({self._quote(c)} AS {double})" for c in plan.float_columns]
        outputs = [*self._key_outputs(key), *self._texts(plan), *floats]
        columns = ", ".join(f"{o} AS dq_o{n}" for n, o in enumerate(outputs))
        fetched: list[sides.Fetched] = []
        for chosen in self._selections(key, selected):
            where = self._where(self._keyed(key), chosen)
            statement = f"SELECT {columns} FROM {self._source()}{where}"
            answer = self._execute(statement)
            fetched += [sides.fetched_row(row, key, len(plan.columns)) for row in answer]
        self.rows_fetched += len(fetched)
        return fetched
