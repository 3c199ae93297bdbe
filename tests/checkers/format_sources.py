"""Spark data sources named `delta` and `iceberg`, as a session with a table format's own Spark
support has them. delta-spark and iceberg-spark-runtime are JVM packages this test machine
cannot fetch, so these Python data sources take their place: each reads the table as the
format's reference readers do, honouring what a direct Parquet read cannot (delta-rs's query
engine applies deletion vectors, pyiceberg applies delete files), with the same options
(`versionAsOf`, `snapshot-id`)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from pyspark.sql import SparkSession
from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition
from pyspark.sql.pandas.types import from_arrow_schema
from pyspark.sql.types import StructType


def _rows(table: Any) -> Iterator[tuple[object, ...]]:
    import pyarrow as pa

    for row in pa.table(table).to_pylist():
        yield tuple(row.values())


class _Reader(DataSourceReader):
    def __init__(self, source: _TableSource) -> None:
        self.source = source

    def read(self, partition: InputPartition) -> Iterator[tuple[object, ...]]:
        yield from _rows(self.source.rows())


class _TableSource(DataSource):
    def schema(self) -> StructType:
        import pyarrow as pa

        return from_arrow_schema(pa.schema(self.arrow_schema()))

    def reader(self, schema: StructType) -> DataSourceReader:
        return _Reader(self)

    def arrow_schema(self) -> Any:
        raise NotImplementedError

    def rows(self) -> Any:
        raise NotImplementedError


class DeltaSource(_TableSource):
    """`spark.read.format("delta").option("versionAsOf", v).load(path)` through delta-rs."""

    @classmethod
    def name(cls) -> str:
        return "delta"

    def _table(self) -> Any:
        from deltalake import DeltaTable

        version = self.options.get("versionAsOf")
        return DeltaTable(self.options["path"], version=None if version is None else int(version))

    def arrow_schema(self) -> Any:
        return self._table().schema().to_arrow()

    def rows(self) -> Any:
        from deltalake import QueryBuilder

        return QueryBuilder().register("t", self._table()).execute("SELECT * FROM t").read_all()


class IcebergSource(_TableSource):
    """`spark.read.format("iceberg").option("snapshot-id", s).load(metadata_file)` through
    pyiceberg."""

    @classmethod
    def name(cls) -> str:
        return "iceberg"

    def _table(self) -> Any:
        from pyiceberg.table import StaticTable

        return StaticTable.from_metadata(self.options["path"])

    def arrow_schema(self) -> Any:
        return self._table().schema().as_arrow()

    def rows(self) -> Any:
        snapshot = self.options.get("snapshot-id")
        scan = self._table().scan(snapshot_id=None if snapshot is None else int(snapshot))
        return scan.to_arrow()


def session_with_format_support(spark: SparkSession) -> SparkSession:
    """A new session of `spark`'s application (its own registry of data sources) with both."""
    session = spark.newSession()
    session.dataSource.register(DeltaSource)
    session.dataSource.register(IcebergSource)
    return session
