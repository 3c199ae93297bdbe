"""Resolving column names against a schema without running Spark, for analyzer preconditions."""

from __future__ import annotations

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    DataType,
    MapType,
    NumericType,
    StringType,
    StructType,
)


def split_column_name(name: str) -> list[str]:
    """Split `a.b` into its path; backticks quote a part that itself holds dots (`` `a.b` ``)."""
    parts: list[str] = []
    current: list[str] = []
    quoted = False
    i = 0
    while i < len(name):
        ch = name[i]
        if ch == "`":
            if quoted and i + 1 < len(name) and name[i + 1] == "`":
                current.append("`")
                i += 1
            else:
                quoted = not quoted
        elif ch == "." and not quoted:
            parts.append("".join(current))
            current = []
        else:
            current.append(ch)
        i += 1
    parts.append("".join(current))
    return parts


def resolve_type(schema: StructType, name: str) -> DataType | None:
    """The type of column `name` (case-insensitive, as Spark resolves by default), or None."""
    current: DataType = schema
    for part in split_column_name(name):
        if not isinstance(current, StructType):
            return None
        matches = [f for f in current.fields if f.name == part] or [
            f for f in current.fields if f.name.lower() == part.lower()
        ]
        if len(matches) != 1:
            return None
        current = matches[0].dataType
    return current


def column(name: str) -> Column:
    return F.col(name)


def is_numeric(dtype: DataType) -> bool:
    return isinstance(dtype, NumericType)


def is_string(dtype: DataType) -> bool:
    return isinstance(dtype, StringType)


def is_groupable(dtype: DataType) -> bool:
    if isinstance(dtype, MapType):
        return False
    if isinstance(dtype, ArrayType):
        return is_groupable(dtype.elementType)
    if isinstance(dtype, StructType):
        return all(is_groupable(f.dataType) for f in dtype.fields)
    return True


def is_atomic(dtype: DataType) -> bool:
    return not isinstance(dtype, (StructType, ArrayType, MapType))


def sketchable_directly(dtype: DataType) -> bool:
    """Types `hll_sketch_agg` takes as they are; others are sketched through their string form."""
    from pyspark.sql.types import IntegerType, LongType

    return isinstance(dtype, (IntegerType, LongType, StringType, BinaryType))


def type_name(dtype: DataType) -> str:
    return dtype.simpleString()


__all__ = [
    "column",
    "is_atomic",
    "is_groupable",
    "is_numeric",
    "is_string",
    "resolve_type",
    "sketchable_directly",
    "split_column_name",
    "type_name",
]
