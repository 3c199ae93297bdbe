"""File parsers: CSV, JSON lines and Parquet, read by Spark; and Spark catalog tables. Files can
be partitioned in name=value directories (`HivePartitions`), tables by a column
(`PartitionColumn`)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import ClassVar

from pyspark.sql import DataFrame, DataFrameReader, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import StructType

from checkers.metrics import attach_stats
from checkers.parsers import _column_partitions as columns
from checkers.parsers._base import Lazy, Parser, SourceIdentity, resolve
from checkers.parsers._hive import key_column, list_partitions, local_root, spark_path
from checkers.parsers._malformed import MalformedAt, first_malformed
from checkers.parsers._shadowing import refuse_shadowing
from checkers.parsers.parquet_footers import footers_of
from checkers.parsers.partitions import (
    PARTITION_COLUMN,
    HivePartitions,
    Partition,
    PartitionColumn,
    Partitioning,
)


def _options(options: Mapping[str, str] | tuple[tuple[str, str], ...]) -> dict[str, str]:
    return dict(options.items() if isinstance(options, Mapping) else options)


class _FileParser(Parser):
    """Files Spark reads with one reader, whole (`read`) or some partitions' files with the root as
    `basePath`, so partition columns are the same columns as in a full read."""

    path: Lazy
    options: tuple[tuple[str, str], ...]
    partitioning_kind: ClassVar[type[Partitioning] | None] = HivePartitions
    file_format: ClassVar[str]

    def _reader(self, spark: SparkSession) -> DataFrameReader:
        raise NotImplementedError

    def read(self, spark: SparkSession) -> DataFrame:
        df = self._reader(spark).options(**_options(self.options)).load(resolve(self.path))
        return self._unshadowed(df)

    def locate_malformed(self, frame: DataFrame) -> MalformedAt | None:
        if not self.needs_full_scan:  # binary formats fail on the file, not on a record
            return None
        options = _options(self.options)
        reader = self._reader(frame.sparkSession).options(**options)
        header = self.file_format == "csv" and options.get("header", "true").lower() == "true"
        return first_malformed(reader, frame, header=header)

    def _unshadowed(self, df: DataFrame) -> DataFrame:
        refuse_shadowing(df, self.file_format, _options(self.options), self.describe())
        return df

    def source_identity(self) -> SourceIdentity:
        return SourceIdentity.of_path(resolve(self.path))

    def _list_partitions(self, spark: SparkSession) -> list[Partition]:
        assert isinstance(self.partitioning, HivePartitions)
        return list_partitions(spark, resolve(self.path), self.partitioning.columns)

    def _read_partitions(self, spark: SparkSession, partitions: list[Partition]) -> DataFrame:
        if not partitions:  # the columns of one partition's files, none of their rows
            listed = self.partitions(spark)
            if not listed:
                return (
                    self.read(spark)
                    .where(F.lit(False))
                    .withColumn(PARTITION_COLUMN, F.lit(None).cast("string"))
                )
            return self._read_partitions(spark, listed[:1]).where(F.lit(False))
        depths = {p.key.count("/") + 1 for p in partitions}
        if len(depths) != 1 or not all(p.paths for p in partitions):
            raise ValueError(f"not partitions listed from {self.describe()}: {partitions}")
        root = resolve(self.path)
        local = local_root(root)
        base = os.path.abspath(local) if local == root else root
        files = [spark_path(path) for p in partitions for path in p.paths]
        reader = self._reader(spark).options(**_options(self.options)).option("basePath", base)
        read = self._unshadowed(reader.load(files))
        return read.withColumn(PARTITION_COLUMN, key_column(depths.pop()))


@dataclass(frozen=True)
class CsvParser(_FileParser):
    """A CSV file or directory with a header row. Malformed rows fail the read (FAILFAST), even
    in columns no check uses, and a promised `schema` is enforced against the header (no
    inference pass when it is given).

    >>> CsvParser("data/bookings.csv", schema="id int, amount double, created_at timestamp")
    """

    path: Lazy
    schema: str | StructType | None = None
    options: tuple[tuple[str, str], ...] = field(default=())
    deadline_s: float | None = field(default=None, kw_only=True)
    partitioning: Partitioning | None = field(default=None, kw_only=True)
    file_format: ClassVar[str] = "csv"
    needs_full_scan: ClassVar[bool] = True

    def _reader(self, spark: SparkSession) -> DataFrameReader:
        reader = spark.read.format("csv").option("header", "true").option("mode", "FAILFAST")
        if self.schema is not None:
            return reader.schema(self.schema).option("enforceSchema", "false")
        return reader.option("inferSchema", "true")

    def describe(self) -> str:
        return f"CSV {resolve(self.path)}"


@dataclass(frozen=True)
class JsonParser(_FileParser):
    """JSON lines (one object per line); malformed lines fail the read."""

    path: Lazy
    schema: str | StructType | None = None
    options: tuple[tuple[str, str], ...] = field(default=())
    deadline_s: float | None = field(default=None, kw_only=True)
    partitioning: Partitioning | None = field(default=None, kw_only=True)
    file_format: ClassVar[str] = "json"
    needs_full_scan: ClassVar[bool] = True

    def _reader(self, spark: SparkSession) -> DataFrameReader:
        reader = spark.read.format("json").option("mode", "FAILFAST")
        return reader if self.schema is None else reader.schema(self.schema)

    def describe(self) -> str:
        return f"JSON {resolve(self.path)}"


@dataclass(frozen=True)
class ParquetParser(_FileParser):
    """A Parquet file or (partitioned) directory; a promised schema is compared with the file's.

    >>> ParquetParser("s3a://lake/bookings", partitioning=HivePartitions(("day",)))
    """

    path: Lazy
    schema: str | StructType | None = None
    options: tuple[tuple[str, str], ...] = field(default=())
    deadline_s: float | None = field(default=None, kw_only=True)
    partitioning: Partitioning | None = field(default=None, kw_only=True)
    file_format: ClassVar[str] = "parquet"

    def _reader(self, spark: SparkSession) -> DataFrameReader:
        return spark.read.format("parquet")

    def read(self, spark: SparkSession) -> DataFrame:
        df = super().read(spark)
        return attach_stats(df, lambda: footers_of(df))

    def describe(self) -> str:
        return f"Parquet {resolve(self.path)}"


@dataclass(frozen=True)
class TableParser(Parser):
    """A table (or view) in the Spark catalog. Partitioned by a column, its partitions are listed
    by one Spark job over just the partition and change columns (a count and a maximum per value:
    cheap on columnar tables, a scan of those two columns nonetheless).

    >>> TableParser("bookings", partitioning=PartitionColumn("day", changed="updated_at"))
    """

    table: str
    schema: str | StructType | None = None
    deadline_s: float | None = field(default=None, kw_only=True)
    partitioning: Partitioning | None = field(default=None, kw_only=True)
    partitioning_kind: ClassVar[type[Partitioning] | None] = PartitionColumn

    def read(self, spark: SparkSession) -> DataFrame:
        return spark.table(self.table)

    def describe(self) -> str:
        return f"table {self.table}"

    def source_identity(self) -> SourceIdentity:
        return SourceIdentity.of_table(self.table)

    def _list_partitions(self, spark: SparkSession) -> list[Partition]:
        assert isinstance(self.partitioning, PartitionColumn)
        column, changed = self.partitioning.column, self.partitioning.changed
        df = spark.table(self.table)
        columns.field_type(df.schema, changed, self.describe())
        columns.field_type(df.schema, column, self.describe())
        grouped = df.groupBy(columns.quoted(column).alias("value")).agg(
            F.count(F.lit(1)).alias("n"),
            F.max(columns.quoted(changed)).cast("string").alias("latest"),
        )
        return [
            Partition(g.key, columns.fingerprint(row["n"], row["latest"]), g.ts, value=g.value)
            for g, row in columns.groups(grouped, column, "value", "n", "latest")
        ]

    def _read_partitions(self, spark: SparkSession, partitions: list[Partition]) -> DataFrame:
        assert isinstance(self.partitioning, PartitionColumn)
        column = self.partitioning.column
        chosen = columns.only(spark.table(self.table), column, [p.value for p in partitions])
        return chosen.withColumn(PARTITION_COLUMN, columns.key_of(column, columns.quoted(column)))
