"""Parsers: where a check's data comes from. Each builds a DataFrame and keeps the schema it
promises; a source that breaks raises `SourceError`, which the check turns into an ERROR outcome.
Partitioned sources list their partitions and read only some of them (`partitions`)."""

from checkers.parsers._base import (
    Parser,
    SourceError,
    SourceIdentity,
    cast_to_promise,
    resolve,
    schema_problems,
)
from checkers.parsers.callable import CallableParser
from checkers.parsers.delta import DeltaParser
from checkers.parsers.files import CsvParser, JsonParser, ParquetParser, TableParser
from checkers.parsers.http import HttpJsonParser
from checkers.parsers.iceberg import IcebergParser
from checkers.parsers.jdbc import JdbcParser
from checkers.parsers.partitions import (
    PARTITION_COLUMN,
    DataFiles,
    HivePartitions,
    Partition,
    PartitionColumn,
    Partitioning,
)
from checkers.parsers.sql import SqlQueryParser

__all__ = [
    "PARTITION_COLUMN",
    "CallableParser",
    "CsvParser",
    "DataFiles",
    "DeltaParser",
    "HivePartitions",
    "HttpJsonParser",
    "IcebergParser",
    "JdbcParser",
    "JsonParser",
    "ParquetParser",
    "Parser",
    "Partition",
    "PartitionColumn",
    "Partitioning",
    "SourceError",
    "SourceIdentity",
    "SqlQueryParser",
    "TableParser",
    "cast_to_promise",
    "resolve",
    "schema_problems",
]
