"""A table format's own Spark support (delta-spark, iceberg-spark-runtime): its data source, when
the session has one. Through it Spark honours what a direct Parquet read of the files cannot
(deletion vectors, column mapping, delete files, renamed columns)."""

from __future__ import annotations

import weakref
from collections.abc import Mapping

from pyspark.sql import DataFrame, SparkSession

from checkers.errors import describe_failure
from checkers.parsers._base import SourceError

#: Spark's error condition for a `format(...)` no data source answers to.
_NOT_FOUND = "DATA_SOURCE_NOT_FOUND"
#: The data sources each session was found to lack: a session's packages do not change, and
#: asking again costs a failed lookup per load (~0.1 s on classic Spark).
_missing: weakref.WeakKeyDictionary[SparkSession, set[str]] = weakref.WeakKeyDictionary()


def format_source(
    spark: SparkSession, name: str, location: str, options: Mapping[str, str]
) -> DataFrame | None:
    """`location` read through the session's data source `name` with `options`, or None when the
    session has no such data source. Classic Spark looks the source up when the read is built;
    Spark Connect only when the plan is analysed, so the schema is asked for here (no job)."""
    if name in _missing.get(spark, ()):
        return None
    try:
        df = spark.read.format(name).options(**options).load(location)
        df.schema  # noqa: B018 - analysis: where Spark Connect finds the source missing
    except Exception as exc:
        if _NOT_FOUND in str(exc):
            _missing.setdefault(spark, set()).add(name)
            return None
        raise SourceError(
            f"cannot read {location} through the session's {name} data source: "
            f"{describe_failure(exc)}"
        ) from exc
    return df
