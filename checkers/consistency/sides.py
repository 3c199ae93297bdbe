"""The two sides of a consistency comparison, each answering in its own engine: a database table
through SQLAlchemy (PostgreSQL, MariaDB/MySQL, SQLite) or through Spark's JDBC source, or a Spark
DataFrame (files, tables). All answer the same four questions: position bounds, per-cell counts
and checksums over position ranges, duplicated keys, and the rows of small ranges (the only rows
that move). A row's position is its key when the key is one integer column, else a number read
from the md5 of its key's canonical texts (the same in every engine, no collation involved).
Here: what all share; the database sides are in sql_side and jdbc_side, Spark's in spark_side."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from checkers.consistency.normalise import Kind, Rules

#: A half-open range of positions [start, stop).
Range = tuple[int, int]
#: A key as compared: the integer itself, or the canonical texts of a hashed key's columns.
Key = int | tuple[str, ...]
#: Hex digits of a hashed key's md5 read as its position: 56 bits.
POSITION_DIGITS = 14
#: A cell's row count and the exact sum of its rows' hash integers.
Cell = tuple[int, int]
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
class KeyPlan:
    """The key on one side: its columns (this side's names) and their kinds. One integer column
    is its own position; any other key (text, composite) is placed by a hash of its texts."""

    columns: tuple[str, ...]
    kinds: tuple[Kind, ...]
    rules: Rules

    @property
    def hashed(self) -> bool:
        return not (len(self.columns) == 1 and self.kinds[0] == "integer")

    @property
    def text_kinds(self) -> list[bool]:
        return [kind == "text" for kind in self.kinds]


@dataclass(frozen=True)
class Bounds:
    low: int | None
    high: int | None
    rows: int
    null_keys: int


@dataclass(frozen=True)
class Fetched:
    """A row of a small range: its key, each column's canonical text, and float columns' values."""

    key: Key
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

    def has_unique_key(self, key: KeyPlan) -> bool:
        """True when the engine guarantees `key` is unique (no need to look for duplicates)."""
        return False

    @abstractmethod
    def bounds(self, key: KeyPlan) -> Bounds:
        """The lowest and highest position, the rows, and the rows with a NULL in the key."""

    @abstractmethod
    def cells(
        self, key: KeyPlan, plan: RowPlan, selected: Selection, low: int, width: int
    ) -> dict[int, Cell]:
        """Count and checksum the selected keyed rows by cell `(position - low) div width`."""

    @abstractmethod
    def duplicates(self, key: KeyPlan) -> tuple[int, dict[Key, int]]:
        """How many keys occur more than once, and up to DUPLICATES_LISTED of them with counts."""

    @abstractmethod
    def rows(self, key: KeyPlan, plan: RowPlan, selected: Selection) -> list[Fetched]: ...

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


class Unsupported(str):
    """A column kind the comparison cannot normalise, and why (an error only if compared)."""


def is_unsupported(kind: object) -> bool:
    return isinstance(kind, Unsupported)


def key_of(values: Sequence[Any], key: KeyPlan) -> Key:
    """A key as compared, from the leading values of a fetched row (its texts when hashed)."""
    if key.hashed:
        return tuple(str(v) for v in values[: len(key.columns)])
    return int(values[0])


def fetched_row(row: Sequence[Any], key: KeyPlan, texts: int) -> Fetched:
    width = len(key.columns)
    return Fetched(
        key_of(row, key),
        tuple(row[width : width + texts]),
        tuple(_float(v) for v in row[width + texts :]),
    )


def as_int(value: object) -> int | None:
    return None if value is None else int(value)  # type: ignore[call-overload]


def _float(value: object) -> float | None:
    return None if value is None else float(value)  # type: ignore[arg-type]
