"""Parser for anything else: a function of the SparkSession returning a DataFrame."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.types import StructType

from checkers.parsers._base import Parser


@dataclass(frozen=True)
class CallableParser(Parser):
    """`function(spark)` builds the DataFrame (joins of several sources, spreadsheets...).

    >>> CallableParser(lambda spark: spark.table("bookings").join(spark.table("cars"), "car_id"))
    """

    function: Callable[[SparkSession], DataFrame]
    schema: str | StructType | None = None
    name: str = ""
    deadline_s: float | None = field(default=None, kw_only=True)

    def read(self, spark: SparkSession) -> DataFrame:
        return self.function(spark)

    def describe(self) -> str:
        return self.name or getattr(self.function, "__qualname__", "a function")
