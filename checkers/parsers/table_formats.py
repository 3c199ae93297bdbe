"""What Delta and Iceberg parsers share: a table's snapshot as its data files (with their statistics
and partition values), read by Spark's Parquet reader over exactly those files (so it runs on
classic Spark, a cluster and Spark Connect alike), or through the format's own Spark data source
where the session has it; each file a partition for incremental checks."""

from __future__ import annotations

import datetime as dt
import weakref
from abc import abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import ClassVar

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import StructType

from checkers.metrics import ColumnStats, FileStats, SourceStats, attach_stats
from checkers.parsers._base import Parser, SourceError
from checkers.parsers._hive import spark_path
from checkers.parsers.partitions import (
    PARTITION_COLUMN,
    DataFiles,
    Partition,
    Partitioning,
    period_start,
)


@dataclass(frozen=True)
class SnapshotFile:
    """One data file of a snapshot: `key` names it within the table (its path relative to the
    table's root), `uri` is where Spark reads it; `partition` holds the partition values the
    format keeps outside the file (Delta's), as text."""

    key: str
    uri: str
    size: int
    rows: int | None
    # what the file holds follows from its name: left out of equality, so files hash
    columns: Mapping[str, ColumnStats] = field(default_factory=dict, compare=False)
    partition: Mapping[str, str | None] = field(default_factory=dict, compare=False)

    @property
    def name(self) -> str:
        return self.uri.rstrip("/").rsplit("/", 1)[-1]


@dataclass(frozen=True)
class Snapshot:
    """A table as of one commit: its schema (partition columns included), the columns whose
    values live in the log instead of the files, its data files, and what they tell.
    `problems` names what in it a direct Parquet read of the files would get wrong."""

    version: int
    committed_at: dt.datetime | None
    schema: StructType
    files: tuple[SnapshotFile, ...]
    origin: str  # where the statistics come from, for people ("Delta log")
    partition_columns: tuple[str, ...] = ()
    exact_bounds: frozenset[str] = frozenset()
    problems: tuple[str, ...] = ()

    def stats(self) -> SourceStats:
        files = tuple(FileStats(f.uri, f.size, f.rows, f.columns) for f in self.files)
        problem = "; ".join(self.problems) or None  # the files' counts include deleted rows
        return SourceStats(files, self.origin, self.exact_bounds, problem)


#: DataFrames a table-format parser built, and the schema the table's metadata declares: Spark's
#: file reader makes every column nullable, the table's schema says which are NOT NULL.
_declared: weakref.WeakKeyDictionary[DataFrame, StructType] = weakref.WeakKeyDictionary()


def declared_schema(df: DataFrame) -> StructType | None:
    """The schema `df`'s table declares in its metadata (None: not built by a table-format
    parser), nullability included."""
    return _declared.get(df)


def _lookup(by_name: Mapping[str, str | None]) -> Column:
    """The value for each row's file, looked up by the file's name (unique in a table: writers
    put a UUID in it)."""
    name = F.url_decode(F.element_at(F.split(F.col("_metadata.file_path"), "/"), -1))
    pairs = [F.lit(x) for k, v in by_name.items() for x in (k, v)]
    return F.create_map(*pairs)[name] if pairs else F.lit(None)


def read_files(
    spark: SparkSession, snapshot: Snapshot, files: Sequence[SnapshotFile], *, keyed: bool = False
) -> DataFrame:
    """Exactly `files` of the snapshot, with the snapshot's schema (no inference pass); partition
    values the format keeps in its log become columns. With `keyed`, each row's file key is in
    `PARTITION_COLUMN`."""
    names = [f.name for f in files]
    if len(set(names)) != len(names):
        raise SourceError(f"{snapshot.origin}: two data files share a name; cannot tell rows apart")
    outside = set(snapshot.partition_columns)
    in_files = StructType([f for f in snapshot.schema.fields if f.name not in outside])
    if files:
        df = spark.read.schema(in_files).parquet(*(spark_path(f.uri) for f in files))
    else:
        df = spark.createDataFrame([], in_files)
    columns = []
    for spec in snapshot.schema.fields:
        if spec.name in outside:
            values = {f.name: f.partition.get(spec.name) for f in files}
            columns.append(_lookup(values).cast(spec.dataType).alias(spec.name))
        else:
            columns.append(F.col(f"`{spec.name}`"))
    if keyed:
        keys = _lookup({f.name: f.key for f in files}).cast("string")
        columns.append(keys.alias(PARTITION_COLUMN))
    return df.select(*columns)


def file_partition(file: SnapshotFile) -> Partition:
    """A data file as a partition: files never change, so its key and size fingerprint it; its
    time is the period its partition values name, if any."""
    values = [(k, v) for k, v in file.partition.items() if v is not None]
    return Partition(
        file.key,
        f"{file.size}",
        ts=period_start(values) if values else None,
        paths=(file.uri,),
        value=file,
    )


class TableFormatParser(Parser):
    """A table format's parser: `inspect` lists the data files of the version to read and what in
    it the direct Parquet read cannot honour. `spark_support` chooses the reader: None (the
    default) reads through the format's own Spark data source where the session has it, else
    the files directly; True requires that data source; False always reads the files."""

    partitioning: Partitioning | None = DataFiles()
    partitioning_kind: ClassVar[type[Partitioning] | None] = DataFiles
    spark_support: bool | None = None
    #: The format's Spark data source (`spark.read.format(...)`) and what brings it to a session.
    spark_format: ClassVar[str]
    spark_package: ClassVar[str]

    @abstractmethod
    def inspect(self) -> Snapshot:
        """The table's snapshot to read, its files and statistics (reads metadata only)."""

    @abstractmethod
    def _format_read(self, spark: SparkSession, snapshot: Snapshot) -> DataFrame | None:
        """`snapshot` read through the session's format data source (None: the session has
        none), pinned to the snapshot's version."""

    def snapshot(self) -> Snapshot:
        """The snapshot, for a direct read of its files: a `SourceError` naming what the direct
        read cannot honour, and the fix."""
        return self._directly_readable(self.inspect())

    def _directly_readable(self, snapshot: Snapshot) -> Snapshot:
        if snapshot.problems:
            raise SourceError(
                f"{self.describe()} uses {'; '.join(snapshot.problems)}, which a direct Parquet "
                f"read cannot honour: read it in a Spark session with {self.spark_package} "
                f"(DeltaParser and IcebergParser then read through it; incremental checks "
                f"always read the files directly)"
            )
        return snapshot

    def read(self, spark: SparkSession) -> DataFrame:
        snapshot = self.inspect()
        if self.spark_support is not False:
            through = self._format_read(spark, snapshot)
            if through is not None:
                _declared[through] = snapshot.schema
                return attach_stats(through, snapshot.stats)
            if self.spark_support:
                raise SourceError(
                    f"{self.describe()}: the Spark session has no {self.spark_format} data "
                    f"source (spark_support=True): start it with {self.spark_package}"
                )
        snapshot = self._directly_readable(snapshot)  # metadata read once per load
        df = read_files(spark, snapshot, snapshot.files)
        _declared[df] = snapshot.schema
        return attach_stats(df, snapshot.stats)

    def _list_partitions(self, spark: SparkSession) -> list[Partition]:
        return [file_partition(f) for f in self.snapshot().files]

    def _read_partitions(self, spark: SparkSession, partitions: list[Partition]) -> DataFrame:
        snapshot = self.snapshot()
        files = [p.value for p in partitions]
        if not all(isinstance(f, SnapshotFile) for f in files):
            raise ValueError(f"not data files listed from {self.describe()}: {partitions}")
        return read_files(spark, snapshot, files, keyed=True)  # type: ignore[arg-type]
