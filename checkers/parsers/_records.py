"""Python records (from a database cursor or a JSON API) as a Spark DataFrame, through Arrow."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import NullType, StringType, StructField, StructType

from checkers.parsers._base import cast_to_promise, promised_struct


def records_frame(
    spark: SparkSession,
    records: Sequence[Mapping[str, object]],
    columns: Sequence[str],
    schema: str | StructType | None,
) -> DataFrame:
    """A DataFrame of `records` with `columns`. Arrow infers types; columns with only NULLs (or
    no rows at all) become strings; a promised `schema` casts columns to the promised types."""
    if records:
        table = pa.Table.from_pylist([dict(r) for r in records])
        df = spark.createDataFrame(table.select([c for c in columns if c in table.column_names]))
    else:  # nothing to infer from (Spark Connect refuses an empty Arrow table)
        df = spark.createDataFrame([], StructType([StructField(c, StringType()) for c in columns]))
    df = df.select(
        *[
            F.col(f"`{f.name}`").cast("string").alias(f.name)
            if isinstance(f.dataType, NullType)
            else F.col(f"`{f.name}`")
            for f in df.schema.fields
        ]
    )
    if schema is not None:
        df = cast_to_promise(df, promised_struct(spark, schema))
    return df
