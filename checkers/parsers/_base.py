"""The parser contract: build a DataFrame from a source and keep the schema it promises. A source
that cannot be read or breaks its promise raises `SourceError` naming the cause. A partitioned
source also lists its partitions and reads some of them."""

from __future__ import annotations

import math
import os
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import ClassVar

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import StructType

from checkers.errors import describe_failure
from checkers.parsers.partitions import Partition, Partitioning

#: A literal value, or a function giving it when the source is read (paths from settings, URLs
#: with secrets from the environment).
Lazy = str | Callable[[], str]


@dataclass(frozen=True)
class SourceIdentity:
    """A source as alerting compares them: `key` is equal for parsers reading the same data
    (`path:/lake/flights`, `table:bookings`, `query:SELECT ...`); `label` names it for people
    (`flights`), never with a secret."""

    key: str
    label: str

    @classmethod
    def of_path(cls, path: str) -> SourceIdentity:
        normal = path.rstrip("/") or "/"
        if "://" not in normal:
            normal = os.path.normpath(os.path.abspath(normal))
        return cls(f"path:{normal}", normal.rsplit("/", 1)[-1] or normal)

    @classmethod
    def of_table(cls, table: str) -> SourceIdentity:
        return cls(f"table:{table.strip().lower()}", table.strip())

    @classmethod
    def of_query(cls, query: str, label: str) -> SourceIdentity:
        return cls(f"query:{' '.join(query.split())}", label)


class SourceError(Exception):
    """A source could not be read, or its data does not match the promised schema."""


def resolve(value: Lazy) -> str:
    """A lazy setting (a string, or a callable giving one when the source is read) as it is now."""
    return value() if callable(value) else value


def promised_struct(spark: SparkSession, schema: str | StructType) -> StructType:
    """The promised schema as a StructType (Spark parses DDL text; no job runs)."""
    if isinstance(schema, StructType):
        return schema
    try:
        return spark.createDataFrame([], schema).schema
    except Exception as exc:
        raise ValueError(
            f"cannot parse promised schema {schema!r}: {describe_failure(exc)}"
        ) from exc


def schema_problems(actual: StructType, promised: StructType) -> list[str]:
    """How `actual` breaks `promised`: missing columns and columns of another type. Extra columns
    are allowed (a promise is about what the check needs)."""
    present = {f.name.lower(): f for f in actual.fields}
    problems = []
    for field in promised.fields:
        found = present.get(field.name.lower())
        if found is None:
            problems.append(f"column {field.name!r} is missing")
        elif found.dataType != field.dataType:
            problems.append(
                f"column {field.name!r} is {found.dataType.simpleString()}, "
                f"promised {field.dataType.simpleString()}"
            )
    return problems


class Parser(ABC):
    """Base of parsers: `read` builds the DataFrame, `load` adds error wrapping and the schema
    promise. Subclasses are frozen dataclasses, so checks reading the same source can share it.
    Parsers given a `partitioning` also list their partitions (`partitions`) and read some of
    them (`read_partitions`)."""

    schema: str | StructType | None = None
    #: Sources without types (SQL results, JSON APIs) cast to the promise while reading instead.
    casts_to_promise: ClassVar[bool] = False
    #: Text files are parsed lazily, column by column: every run also scans all their columns,
    #: so a malformed value anywhere is an error (see FullScanChecker).
    needs_full_scan: ClassVar[bool] = False
    #: Seconds this source may take to load, instead of the run's default (`DQ_SOURCE_DEADLINE_S`).
    deadline_s: float | None = None
    #: How the source splits into partitions; None: it is read whole.
    partitioning: Partitioning | None = None
    #: The kind of partitioning the parser can list and read (None: it cannot be partitioned).
    partitioning_kind: ClassVar[type[Partitioning] | None] = None

    def __post_init__(self) -> None:
        if self.deadline_s is not None and not 0 < self.deadline_s < math.inf:
            raise ValueError(f"deadline_s must be a positive number of seconds: {self.deadline_s}")
        given, kind = self.partitioning, self.partitioning_kind
        if given is None:
            return
        name = type(self).__name__
        if kind is None:
            raise ValueError(f"{name} cannot be partitioned")
        if not isinstance(given, kind):
            fits = f": {type(given).__name__} fits {given.fits}" if hasattr(given, "fits") else ""
            raise ValueError(
                f"{name} takes partitioning={kind.__name__}(...), not {type(given).__name__}{fits}"
            )

    @abstractmethod
    def read(self, spark: SparkSession) -> DataFrame:
        """The source as a DataFrame (lazy where the source allows)."""

    @abstractmethod
    def describe(self) -> str:
        """Where the data comes from, for messages (never includes secrets)."""

    def source_identity(self) -> SourceIdentity | None:
        """What this parser reads, comparable across checks (the same path, table or query is
        the same source), for alert inhibition; None when it cannot be told (a callable)."""
        return None

    def locate_malformed(self, frame: DataFrame) -> object | None:
        """Where the first malformed record of `frame` (read by this parser) is, in words (a
        file and line), for a text source whose full scan failed; None when it cannot tell."""
        return None

    def load(self, spark: SparkSession) -> DataFrame:
        return self._checked(spark, lambda: self.read(spark))

    def partitions(self, spark: SparkSession) -> list[Partition]:
        """The source's partitions, sorted by key. Listing reads no data: file names, sizes and
        times, or one aggregate over the partition and change columns."""
        self._require_partitioning()
        try:
            found = self._list_partitions(spark)
        except SourceError:
            raise
        except Exception as exc:
            raise SourceError(
                f"cannot list the partitions of {self.describe()}: {describe_failure(exc)}"
            ) from exc
        return sorted(found, key=lambda p: p.key)

    def read_partitions(self, spark: SparkSession, partitions: Sequence[Partition]) -> DataFrame:
        """Only the rows of `partitions` (lazily where the source allows), the promised schema
        checked as `load` does, and the key of each row's partition in `PARTITION_COLUMN`. No
        partitions: an empty DataFrame with the source's columns."""
        self._require_partitioning()
        chosen = list(partitions)
        return self._checked(spark, lambda: self._read_partitions(spark, chosen))

    def _require_partitioning(self) -> None:
        if self.partitioning is None:
            how = f"partitioning={k.__name__}(...)" if (k := self.partitioning_kind) else "none"
            raise ValueError(
                f"{type(self).__name__} declares no partitioning: it has no partitions to list "
                f"or read (partitioning it can take: {how})"
            )

    def _list_partitions(self, spark: SparkSession) -> list[Partition]:
        raise NotImplementedError(f"{type(self).__name__} cannot list partitions")

    def _read_partitions(self, spark: SparkSession, partitions: list[Partition]) -> DataFrame:
        raise NotImplementedError(f"{type(self).__name__} cannot read partitions")

    def _checked(self, spark: SparkSession, build: Callable[[], DataFrame]) -> DataFrame:
        """`build()`, its failures as SourceError, checked against the promised schema."""
        try:
            df = build()
            actual = df.schema
        except SourceError:
            raise
        except Exception as exc:
            raise SourceError(f"cannot read {self.describe()}: {describe_failure(exc)}") from exc
        if self.schema is None or self.casts_to_promise:
            return df
        problems = schema_problems(actual, promised_struct(spark, self.schema))
        if problems:
            raise SourceError(
                f"{self.describe()} does not match its promised schema: " + "; ".join(problems)
            )
        return df


def cast_to_promise(df: DataFrame, promised: StructType) -> DataFrame:
    """Columns of `df` cast to their promised types (for sources that carry no types, such as
    SQL results and JSON APIs); a missing column raises SourceError."""
    present = {c.lower(): c for c in df.columns}
    missing = [f.name for f in promised.fields if f.name.lower() not in present]
    if missing:
        raise SourceError(f"promised columns are missing: {', '.join(missing)}")
    promised_names = {f.name.lower() for f in promised.fields}
    columns = [
        F.col(f"`{present[f.name.lower()]}`").cast(f.dataType).alias(f.name)
        for f in promised.fields
    ]
    columns += [F.col(f"`{c}`") for c in df.columns if c.lower() not in promised_names]
    return df.select(*columns)
