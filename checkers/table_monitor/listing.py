"""`TablesUnder`: a root as a check's source, so a monitor check has a parser like any other (its
tick, inhibition and grouping name the root). Loading it reads nothing: the monitor lists the
tables and their metadata itself."""

from __future__ import annotations

from dataclasses import dataclass

from pyspark.sql import DataFrame, SparkSession

from checkers.parsers._base import Parser, SourceIdentity
from checkers.table_monitor.history import TableRoot


@dataclass(frozen=True)
class TablesUnder(Parser):
    """The tables under `root`, as a check's parser: an empty frame (no Spark job).

    >>> GOLD = LakeRoot("s3://lake/gold")
    >>> class GoldTables(QualityCheck):
    ...     parser = TablesUnder(GOLD)
    ...     def checker(self, _):
    ...         return TableMonitor(GOLD, now=self.now)
    """

    root: TableRoot

    def read(self, spark: SparkSession) -> DataFrame:
        return spark.createDataFrame([], "table string")

    def describe(self) -> str:
        return self.root.describe()

    def source_identity(self) -> SourceIdentity:
        return SourceIdentity(f"tables:{self.root.describe()}", self.root.describe())
