"""File parsers: CSV, JSON lines and Parquet, read by Spark."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import ClassVar

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.types import StructType

from checkers.parsers._base import Lazy, Parser, resolve


def _options(options: Mapping[str, str] | tuple[tuple[str, str], ...]) -> dict[str, str]:
    return dict(options.items() if isinstance(options, Mapping) else options)


@dataclass(frozen=True)
class CsvParser(Parser):
    """A CSV file or directory with a header row. Malformed rows fail the read (FAILFAST), even
    in columns no check uses, and a promised `schema` is enforced against the header (no
    inference pass when it is given).

    >>> CsvParser("data/bookings.csv", schema="id int, amount double, created_at timestamp")
    """

    path: Lazy
    schema: str | StructType | None = None
    options: tuple[tuple[str, str], ...] = field(default=())
    deadline_s: float | None = field(default=None, kw_only=True)
    needs_full_scan: ClassVar[bool] = True

    def read(self, spark: SparkSession) -> DataFrame:
        reader = spark.read.option("header", "true").option("mode", "FAILFAST")
        if self.schema is not None:
            reader = reader.schema(self.schema).option("enforceSchema", "false")
        else:
            reader = reader.option("inferSchema", "true")
        return reader.options(**_options(self.options)).csv(resolve(self.path))

    def describe(self) -> str:
        return f"CSV {resolve(self.path)}"


@dataclass(frozen=True)
class JsonParser(Parser):
    """JSON lines (one object per line); malformed lines fail the read."""

    path: Lazy
    schema: str | StructType | None = None
    options: tuple[tuple[str, str], ...] = field(default=())
    deadline_s: float | None = field(default=None, kw_only=True)
    needs_full_scan: ClassVar[bool] = True

    def read(self, spark: SparkSession) -> DataFrame:
        reader = spark.read.option("mode", "FAILFAST")
        if self.schema is not None:
            reader = reader.schema(self.schema)
        return reader.options(**_options(self.options)).json(resolve(self.path))

    def describe(self) -> str:
        return f"JSON {resolve(self.path)}"


@dataclass(frozen=True)
class ParquetParser(Parser):
    """A Parquet file or (partitioned) directory; a promised schema is compared with the file's."""

    path: Lazy
    schema: str | StructType | None = None
    options: tuple[tuple[str, str], ...] = field(default=())
    deadline_s: float | None = field(default=None, kw_only=True)

    def read(self, spark: SparkSession) -> DataFrame:
        return spark.read.options(**_options(self.options)).parquet(resolve(self.path))

    def describe(self) -> str:
        return f"Parquet {resolve(self.path)}"


@dataclass(frozen=True)
class TableParser(Parser):
    """A table (or view) in the Spark catalog."""

    table: str
    schema: str | StructType | None = None
    deadline_s: float | None = field(default=None, kw_only=True)

    def read(self, spark: SparkSession) -> DataFrame:
        return spark.table(self.table)

    def describe(self) -> str:
        return f"table {self.table}"
