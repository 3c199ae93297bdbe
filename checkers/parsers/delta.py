"""Delta Lake tables through delta-rs (`deltalake`, the `[delta]` extra): the snapshot's data files
and their statistics from the transaction log, the data read by Spark's Parquet reader over
exactly those files, or through delta-spark where the session has it. Features the direct read
cannot honour are then read by delta-spark, else a clear error, never a wrong answer."""

from __future__ import annotations

import datetime as dt
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

_NEEDS_EXTRA = "DeltaParser needs the deltalake package: pip install 'dq-checkers[delta]'"


def _deltalake() -> Any:
    try:
        import deltalake
    except ImportError as exc:
        raise SourceError(_NEEDS_EXTRA) from exc
    return deltalake


def unsupported_features(table: Any) -> list[str]:
    """What in `table` a plain Parquet read of its files would get wrong."""
    found = []
    mode = table.metadata().configuration.get("delta.columnMapping.mode", "none")
    if mode != "none":
        found.append(
            f"column mapping (delta.columnMapping.mode={mode}: files name columns by physical "
            "ids, so a Parquet read would see wrong names and dropped columns)"
        )
    if "deletionVectors" in (table.protocol().reader_features or []):
        try:
            marked = [row["filepath"] for row in _rows(table.deletion_vectors())]
        except Exception as exc:  # cannot tell which rows are deleted: not a safe read either
            marked = [f"(unreadable: {exc})"]
        if marked:
            found.append(
                f"deletion vectors on {len(marked)} data files (rows deleted without rewriting "
                f"the file, e.g. {marked[0]}: a Parquet read would count them)"
            )
    return found


def _rows(reader: Any) -> list[dict[str, Any]]:
    import pyarrow as pa

    return pa.table(reader.read_all()).to_pylist()


def _text(value: object) -> str | None:
    return None if value is None else str(value)


def _file(root: str, action: dict[str, Any], partition_columns: list[str]) -> SnapshotFile:
    path = action["path"]
    uri = path if "://" in path or path.startswith("/") else f"{root}/{path}"
    rows = action.get("num_records")
    columns: dict[str, ColumnStats] = {}
    for key in action:
        kind, _, name = key.partition(".")
        if kind == "null_count":
            columns[name] = ColumnStats(
                action[key], action.get(f"min.{name}"), action.get(f"max.{name}")
            )
    partition = {c: action.get(f"partition.{c}") for c in partition_columns}
    for name, value in partition.items():  # the log holds them: exact, one value per file
        nulls = None if rows is None else (rows if value is None else 0)
        columns[name] = ColumnStats(nulls, value, value)
    return SnapshotFile(
        path, uri, action["size_bytes"], rows, columns, {k: _text(v) for k, v in partition.items()}
    )


@dataclass(frozen=True)
class DeltaParser(TableFormatParser):
    """A Delta table at `path` (local or any store delta-rs reaches with `storage_options`), its
    latest version or `version`, read through delta-spark where the session has it (see
    `spark_support`), else by Spark's Parquet reader, for which deletion vectors and column
    mapping are errors naming the fix.

    >>> DeltaParser("s3a://lake/bookings", storage_options=(("AWS_REGION", "eu-west-1"),))
    """

    path: Lazy
    version: int | None = None
    schema: str | StructType | None = None
    storage_options: tuple[tuple[str, Lazy], ...] = field(default=(), kw_only=True)
    deadline_s: float | None = field(default=None, kw_only=True)
    partitioning: Partitioning | None = field(default=DataFiles(), kw_only=True)
    spark_support: bool | None = field(default=None, kw_only=True)
    spark_format: ClassVar[str] = "delta"
    spark_package: ClassVar[str] = "Delta Lake's own Spark support (delta-spark)"

    def describe(self) -> str:
        at = "" if self.version is None else f" version {self.version}"
        return f"Delta table {resolve(self.path)}{at}"

    def source_identity(self) -> SourceIdentity:
        return SourceIdentity.of_path(resolve(self.path))

    def table(self) -> Any:
        """The `deltalake.DeltaTable` (its log replayed; no data file read)."""
        deltalake = _deltalake()
        options = {k: resolve(v) for k, v in self.storage_options} or None
        try:
            return deltalake.DeltaTable(
                resolve(self.path), version=self.version, storage_options=options
            )
        except Exception as exc:
            raise SourceError(f"cannot open {self.describe()}: {exc}") from exc

    def inspect(self) -> Snapshot:
        import pyarrow as pa

        table = self.table()
        problems = unsupported_features(table)
        partition_columns = list(table.metadata().partition_columns)
        actions = pa.table(table.get_add_actions(flatten=True)).to_pylist()
        root = table.table_uri.rstrip("/")
        files = tuple(_file(root, a, partition_columns) for a in actions)
        schema = from_arrow_schema(pa.schema(table.schema().to_arrow()))
        latest = table.history(limit=1)
        committed = latest[0].get("timestamp") if latest else None
        return Snapshot(
            version=table.version(),
            committed_at=None
            if committed is None
            else dt.datetime.fromtimestamp(committed / 1000, dt.UTC),
            schema=schema,
            files=files,
            origin=f"the Delta log of {resolve(self.path)}",
            partition_columns=tuple(partition_columns),
            # numeric bounds are never truncated; wide bounds come only with deletion vectors
            exact_bounds=frozenset(schema.fieldNames()),
            problems=tuple(problems),
        )

    def _format_read(self, spark: SparkSession, snapshot: Snapshot) -> DataFrame | None:
        version = {"versionAsOf": str(snapshot.version)}  # the version the statistics describe
        return format_source(spark, self.spark_format, resolve(self.path), version)
