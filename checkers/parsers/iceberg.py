"""Iceberg tables through pyiceberg (the `[iceberg]` extra), in any catalog pyiceberg loads (SQL on
SQLite or PostgreSQL, REST, Glue, Hive): the snapshot's data files and their manifest statistics,
the data read by Spark's Parquet reader over exactly those files, or through Iceberg's Spark
runtime where the session has it. Delete files and renamed columns, which the direct read
cannot honour, are then read by that runtime, else a clear error."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.pandas.types import from_arrow_schema

from checkers.metrics import ColumnStats
from checkers.parsers._base import Lazy, SourceError, SourceIdentity, resolve
from checkers.parsers.format_sources import format_source
from checkers.parsers.partitions import DataFiles, Partitioning
from checkers.parsers.table_formats import Snapshot, SnapshotFile, TableFormatParser

if TYPE_CHECKING:
    from pyspark.sql.types import StructType

_NEEDS_EXTRA = "IcebergParser needs the pyiceberg package: pip install 'dq-checkers[iceberg]'"


def load_catalog(name: str, properties: Mapping[str, str]) -> Any:
    try:
        from pyiceberg.catalog import load_catalog as load
    except ImportError as exc:
        raise SourceError(_NEEDS_EXTRA) from exc
    return load(name, **properties)


def renamed_columns(table: Any) -> list[str]:
    """Columns whose name differs from the name an earlier schema gave their field id, or whose
    name an earlier schema gave another id: files written then carry the other name, and Spark's
    Parquet reader matches columns by name."""
    current = {f.field_id: f.name for f in table.schema().fields}
    by_name = {name: field_id for field_id, name in current.items()}
    found = []
    for schema in table.metadata.schemas:
        for f in schema.fields:
            if f.field_id in current and current[f.field_id] != f.name:
                found.append(f"{f.name!r} renamed to {current[f.field_id]!r}")
            elif f.name in by_name and by_name[f.name] != f.field_id:
                found.append(f"{f.name!r} dropped and added again")
    return sorted(set(found))


def _bound(field_type: Any, raw: bytes | None) -> object:
    if raw is None:
        return None
    from pyiceberg.conversions import from_bytes

    return from_bytes(field_type, raw)


def _file(table: Any, task: Any) -> SnapshotFile:
    data = task.file
    location = table.metadata.location.rstrip("/") + "/"
    path = data.file_path
    nulls, lower, upper = data.null_value_counts, data.lower_bounds, data.upper_bounds
    columns = {
        f.name: ColumnStats(
            nulls.get(f.field_id),
            _bound(f.field_type, lower.get(f.field_id)),
            _bound(f.field_type, upper.get(f.field_id)),
        )
        for f in table.schema().fields
        if f.field_type.is_primitive
    }
    key = path[len(location) :] if path.startswith(location) else path
    return SnapshotFile(key, path, data.file_size_in_bytes, data.record_count, columns)


def _planned(scan: Any) -> tuple[list[Any], list[str]]:
    """The scan's file tasks, and the row-level deletes a direct Parquet read would not apply."""
    try:
        tasks = list(scan.plan_files())
    except ValueError as exc:  # pyiceberg refuses to plan equality deletes
        return [], [f"delete files ({exc})"]
    deleted = sorted({d.file_path for t in tasks for d in t.delete_files})
    if deleted:
        return tasks, [f"{len(deleted)} delete files (row-level deletes, e.g. {deleted[0]})"]
    return tasks, []


@dataclass(frozen=True)
class IcebergParser(TableFormatParser):
    """The Iceberg table `table` ("namespace.name") of the pyiceberg catalog `catalog`, configured
    by `catalog_properties` (values may be callables, so secrets come from the environment when
    the source is read) or by pyiceberg's own configuration (`.pyiceberg.yaml`, `PYICEBERG_*`).
    Read through Iceberg's Spark runtime where the session has it (by the table's metadata
    file, see `spark_support`), else by Spark's Parquet reader.

    >>> IcebergParser("sales.orders", catalog="lake",
    ...               catalog_properties=(("type", "sql"), ("uri", lambda: os.environ["LAKE_DB"])))
    """

    table: str
    catalog: str = "default"
    catalog_properties: tuple[tuple[str, Lazy], ...] = field(default=(), kw_only=True)
    snapshot_id: int | None = field(default=None, kw_only=True)
    schema: str | StructType | None = field(default=None, kw_only=True)
    deadline_s: float | None = field(default=None, kw_only=True)
    partitioning: Partitioning | None = field(default=DataFiles(), kw_only=True)
    spark_support: bool | None = field(default=None, kw_only=True)
    spark_format: ClassVar[str] = "iceberg"
    spark_package: ClassVar[str] = "Iceberg's own Spark runtime (iceberg-spark-runtime)"

    def __post_init__(self) -> None:
        if isinstance(self.catalog_properties, Mapping):
            object.__setattr__(self, "catalog_properties", tuple(self.catalog_properties.items()))
        super().__post_init__()

    def describe(self) -> str:
        at = "" if self.snapshot_id is None else f" snapshot {self.snapshot_id}"
        return f"Iceberg table {self.catalog}.{self.table}{at}"

    def source_identity(self) -> SourceIdentity:
        return SourceIdentity(f"iceberg:{self.catalog}.{self.table}".lower(), self.table)

    def load_table(self) -> Any:
        """The pyiceberg `Table` (its metadata read; no data file)."""
        properties = {k: resolve(v) for k, v in self.catalog_properties}
        try:
            return load_catalog(self.catalog, properties).load_table(self.table)
        except SourceError:
            raise
        except Exception as exc:
            raise SourceError(f"cannot open {self.describe()}: {exc}") from exc

    def inspect(self) -> Snapshot:
        table = self.load_table()
        problems = []
        if renamed := renamed_columns(table):
            problems.append(
                f"columns renamed since files were written ({'; '.join(renamed)}: a Parquet "
                "read matches columns by name)"
            )
        current = (
            table.snapshot_by_id(self.snapshot_id)
            if self.snapshot_id is not None
            else table.current_snapshot()
        )
        if self.snapshot_id is not None and current is None:
            raise SourceError(f"{self.describe()} has no such snapshot")
        tasks, deletes = (
            ([], []) if current is None else _planned(table.scan(snapshot_id=current.snapshot_id))
        )
        schema = from_arrow_schema(table.schema().as_arrow())
        return Snapshot(
            version=0 if current is None else current.snapshot_id,
            committed_at=None
            if current is None
            else dt.datetime.fromtimestamp(current.timestamp_ms / 1000, dt.UTC),
            schema=schema,
            files=tuple(_file(table, t) for t in tasks),
            origin=f"the Iceberg manifests of {self.table}",
            # bounds of numbers are never truncated (truncation applies to strings and binary)
            exact_bounds=frozenset(schema.fieldNames()),
            problems=(*problems, *deletes),
        )

    def _format_read(self, spark: SparkSession, snapshot: Snapshot) -> DataFrame | None:
        # by its metadata file, which Iceberg's Spark source loads without a Spark catalog
        location = self.load_table().metadata_location
        has_snapshot = snapshot.committed_at is not None  # an empty table has none
        pinned = {"snapshot-id": str(snapshot.version)} if has_snapshot else {}
        return format_source(spark, self.spark_format, location, pinned)
