"""Columns as a sample or a failing key holds them: every timestamp, also inside structs, arrays
and maps, written by Spark as text in the session's zone with its offset
("2026-11-22T16:16:00+00:00"). Collected as a datetime it would be in the zone of whatever
machine runs `dq`, without one (16:16 UTC read 01:16 the next day on a machine in Tokyo)."""

from __future__ import annotations

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql.types import (
    ArrayType,
    DataType,
    MapType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)


def holds_timestamp(data_type: DataType) -> bool:
    """Whether a value of `data_type` holds a timestamp with a zone, at any depth."""
    if isinstance(data_type, TimestampType):
        return True
    if isinstance(data_type, StructType):
        return any(holds_timestamp(f.dataType) for f in data_type.fields)
    if isinstance(data_type, ArrayType):
        return holds_timestamp(data_type.elementType)
    if isinstance(data_type, MapType):
        return holds_timestamp(data_type.keyType) or holds_timestamp(data_type.valueType)
    return False


def readable(column: Column, data_type: DataType) -> Column:
    """`column` with each timestamp in it as text with its offset; other values unchanged."""
    if not holds_timestamp(data_type):
        return column
    if isinstance(data_type, TimestampType):
        whole = F.date_format(column, "yyyy-MM-dd'T'HH:mm:ssxxx")
        fraction = F.date_format(column, "yyyy-MM-dd'T'HH:mm:ss.SSSSSSxxx")
        return F.when(F.date_format(column, "SSSSSS") == "000000", whole).otherwise(fraction)
    if isinstance(data_type, StructType):
        fields = [readable(column.getField(f.name), f.dataType).alias(f.name) for f in data_type]
        return F.when(column.isNotNull(), F.struct(*fields))
    if isinstance(data_type, ArrayType):
        return F.transform(column, lambda element: readable(element, data_type.elementType))
    assert isinstance(data_type, MapType)
    keys = F.transform(F.map_keys(column), lambda k: readable(k, data_type.keyType))
    values = F.transform(F.map_values(column), lambda v: readable(v, data_type.valueType))
    return F.map_from_arrays(keys, values)


def readable_type(data_type: DataType) -> DataType:
    """The type of `readable(column, data_type)`."""
    if not holds_timestamp(data_type):
        return data_type
    if isinstance(data_type, TimestampType):
        return StringType()
    if isinstance(data_type, StructType):
        return StructType(
            [StructField(f.name, readable_type(f.dataType), f.nullable) for f in data_type]
        )
    if isinstance(data_type, ArrayType):
        return ArrayType(readable_type(data_type.elementType), data_type.containsNull)
    assert isinstance(data_type, MapType)
    return MapType(
        readable_type(data_type.keyType),
        readable_type(data_type.valueType),
        data_type.valueContainsNull,
    )
