"""Partitions named by the values of a column (tables and SQL queries): one key rendering, in
Spark, shared by listing and reading so that both always agree."""

from __future__ import annotations

import datetime as dt
import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

from pyspark.sql import Column, DataFrame, Row
from pyspark.sql import functions as F
from pyspark.sql.types import DataType, StructType, TimestampNTZType, TimestampType

from checkers.parsers.partitions import ts_of_value

#: A NULL value's rendering in keys (Hive's name for the NULL partition).
NULL_VALUE = "__HIVE_DEFAULT_PARTITION__"
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)


def quoted(name: str) -> Column:
    return F.col("`" + name.replace("`", "``") + "`")


def key_of(column: str, values: Column) -> Column:
    """`column=value`, the value as Spark's cast(value AS string) renders it."""
    return F.concat(F.lit(f"{column}="), F.coalesce(values.cast("string"), F.lit(NULL_VALUE)))


def field_type(schema: StructType, column: str, where: str) -> DataType:
    for f in schema.fields:
        if f.name.lower() == column.lower():
            return f.dataType
    raise ValueError(f"{where} has no column {column!r} (columns: {', '.join(schema.names)})")


@dataclass(frozen=True)
class Group:
    """One partition as Spark renders it: key, value, period start."""

    key: str
    value: object
    ts: dt.datetime | None


def groups(frame: DataFrame, column: str, value: str, *extra: str) -> list[tuple[Group, Row]]:
    """Each row of `frame` (one per partition, its value in column `value`) with its key, its
    value and the period it names. Timestamps travel as microseconds, exact in every time zone."""
    kind = field_type(frame.schema, value, "the partition listing")
    values = quoted(value)
    micros = F.unix_micros(values) if isinstance(kind, TimestampType) else F.lit(None)
    rows = frame.select(
        key_of(column, values).alias("key"),
        values.alias("value"),
        micros.cast("long").alias("micros"),
        *[quoted(e) for e in extra],
    ).collect()
    found = []
    for row in rows:
        v = (
            row["value"]
            if row["micros"] is None
            else _EPOCH + dt.timedelta(microseconds=row["micros"])
        )
        found.append((Group(row["key"], v, ts_of_value(v)), row))
    return found


def fingerprint(count: int, latest: object) -> str:
    """A partition's fingerprint: its row count and the maximum of its change column."""
    return hashlib.sha256(f"{count}\0{latest!r}".encode()).hexdigest()


def only(frame: DataFrame, column: str, values: Sequence[object]) -> DataFrame:
    """Rows of `frame` whose `column` is one of `values` (None: the NULL partition)."""
    kind = field_type(frame.schema, column, "the source")
    present = [v for v in values if v is not None]
    if isinstance(kind, TimestampNTZType):  # a Python literal would pass through local time
        literals = [F.lit(str(v)).cast(kind) for v in present]
    else:
        literals = [F.lit(v) for v in present]
    keep = quoted(column).isin(literals) if literals else F.lit(False)
    if len(present) < len(values):
        keep = keep | quoted(column).isNull()
    return frame.where(keep)
