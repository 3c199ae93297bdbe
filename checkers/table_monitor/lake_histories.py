"""Histories of the two kinds of table a lake path holds, from metadata alone: a Delta table's
log (partition values and record counts of its files, or its commits) and a Parquet
directory's footers (rows per file; partition values from Hive directory names, else file
modification times)."""

from __future__ import annotations

import datetime as dt
import posixpath
from collections.abc import Iterable, Mapping, Sequence
from typing import Any
from urllib.parse import unquote

from checkers.parsers.partitions import period_start
from checkers.schema_checker import ColumnChange, schema_changes
from checkers.table_monitor.history import Arrival, TableHistory

#: Delta operations that change no data: they are no load (OPTIMIZE is a compaction).
MAINTENANCE = frozenset(
    {"OPTIMIZE", "VACUUM START", "VACUUM END", "SET TBLPROPERTIES", "FSCK", "ADD CONSTRAINT"}
)


def describe_change(change: ColumnChange) -> str:
    if change.change in ("added", "removed"):
        return f"column {change.column} {change.change}"
    return f"column {change.column}: {change.change} {change.was} -> {change.now}"


def schema_change_lines(before: Any, after: Any) -> tuple[str, ...]:
    """How arrow schema `after` differs from `before` (names, types, nullability)."""
    from pyspark.sql.pandas.types import from_arrow_schema

    found = schema_changes(from_arrow_schema(before), from_arrow_schema(after))
    return tuple(describe_change(c) for c in found)


def _by_period(groups: Mapping[tuple[tuple[str, str], ...], int | None]) -> list[Arrival] | None:
    """Arrivals of partitions (their values -> rows), when every one names a period."""
    arrivals = []
    for values, rows in groups.items():
        start = period_start(values) if values else None
        if start is None:
            return None
        arrivals.append(Arrival(start, rows))
    return sorted(arrivals, key=lambda a: a.at)


def _add(total: int | None, rows: int | None) -> int | None:
    return None if total is None or rows is None else total + rows


def delta_history(name: str, location: str, storage_options: Mapping[str, str]) -> TableHistory:
    """A Delta table's arrivals: its date partitions, else its data commits."""
    import pyarrow as pa
    from deltalake import DeltaTable

    options = dict(storage_options) or None
    table = DeltaTable(location, storage_options=options)
    columns = list(table.metadata().partition_columns)
    groups: dict[tuple[tuple[str, str], ...], int | None] = {}
    for action in pa.table(table.get_add_actions(flatten=True)).to_pylist():
        values = tuple(
            (c, str(action[f"partition.{c}"]))
            for c in columns
            if action.get(f"partition.{c}") is not None
        )
        groups[values] = _add(groups.get(values, 0), action.get("num_records"))
    schema = table.schema().to_arrow()
    changes: tuple[str, ...] = ()
    if table.version() > 0:
        before = DeltaTable(location, version=table.version() - 1, storage_options=options)
        changes = schema_change_lines(pa.schema(before.schema().to_arrow()), pa.schema(schema))
    partitions = _by_period(groups) if columns else None
    if partitions is not None:
        return TableHistory(name, location, tuple(partitions), True, changes)
    return TableHistory(name, location, tuple(_commits(table.history())), False, changes)


def _commits(history: Iterable[Mapping[str, Any]]) -> list[Arrival]:
    arrivals = []
    for commit in history:
        if commit.get("operation") in MAINTENANCE or commit.get("timestamp") is None:
            continue
        metrics = commit.get("operationMetrics") or {}
        rows = metrics.get("num_added_rows", metrics.get("numOutputRows"))
        at = dt.datetime.fromtimestamp(commit["timestamp"] / 1000, dt.UTC)
        arrivals.append(Arrival(at, None if rows is None else int(rows)))
    return sorted(arrivals, key=lambda a: a.at)


def _hive_values(relative: str) -> tuple[tuple[str, str], ...]:
    """name=value pairs of a file's directories below the table (decoded)."""
    parts = posixpath.dirname(relative).split("/")
    return tuple((k, unquote(v)) for p in parts if "=" in p for k, _, v in [p.partition("=")])


def parquet_history(name: str, location: str, fs: Any, files: Sequence[Any]) -> TableHistory:
    """A Parquet directory's arrivals from its files' footers (`files`: pyarrow FileInfo):
    Hive partitions naming periods, else files by modification time. Only footers are read."""
    import pyarrow.parquet as pq

    footers = {}
    for info in files:
        with fs.open_input_file(info.path) as handle:
            footers[info.path] = pq.read_metadata(handle)
    groups: dict[tuple[tuple[str, str], ...], int | None] = {}
    newest: dict[tuple[tuple[str, str], ...], Any] = {}
    for info in files:
        values = _hive_values(posixpath.relpath(info.path, location))
        groups[values] = _add(groups.get(values, 0), footers[info.path].num_rows)
        newest[values] = footers[info.path].schema.to_arrow_schema()
    partitions = _by_period(groups) if any(groups) else None
    if partitions is not None:
        order = sorted(newest, key=lambda v: period_start(v))  # type: ignore[arg-type,return-value]
        schemas = [newest[v] for v in order]
        arrivals = tuple(partitions)
    else:
        timed = sorted(files, key=lambda i: i.mtime)
        schemas = [footers[i.path].schema.to_arrow_schema() for i in timed]
        arrivals = tuple(
            Arrival(i.mtime.astimezone(dt.UTC), footers[i.path].num_rows) for i in timed
        )
    changes = schema_change_lines(schemas[-2], schemas[-1]) if len(schemas) > 1 else ()
    return TableHistory(name, location, arrivals, partitions is not None, changes)
