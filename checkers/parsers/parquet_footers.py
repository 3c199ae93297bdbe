"""Statistics of plain Parquet files from their footers (pyarrow; local files only): rows, and per
top-level column NULL counts and bounds folded over row groups. A statistic a row group lacks
is unknown for its file, never zero."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pyspark.sql import DataFrame

from checkers.metrics import ColumnStats, FileStats, SourceStats
from checkers.parsers._hive import local_root


def _column(metadata: Any, index: int) -> ColumnStats:
    nulls, low, high = 0, None, None
    for g in range(metadata.num_row_groups):
        group = metadata.row_group(g)
        stats = group.column(index).statistics
        if stats is None or not stats.has_null_count:
            return ColumnStats()
        nulls += stats.null_count
        if stats.null_count == group.num_rows:
            continue  # only NULLs: no bounds to add
        if not stats.has_min_max:
            return ColumnStats(None)
        low = stats.min if low is None else min(low, stats.min)
        high = stats.max if high is None else max(high, stats.max)
    return ColumnStats(nulls, low, high)


def file_stats(path: str) -> FileStats:
    import os

    import pyarrow.parquet as pq

    metadata = pq.ParquetFile(path).metadata
    schema = metadata.schema
    columns = {
        schema.column(i).path: _column(metadata, i)
        for i in range(metadata.num_columns)
        if "." not in schema.column(i).path  # nested fields are not top-level columns
    }
    return FileStats(path, os.path.getsize(path), metadata.num_rows, columns)


def footer_stats(paths: Sequence[str]) -> SourceStats | None:
    """The footers' statistics of `paths`, or None when one is not a local file."""
    local = [local_root(p) for p in paths]
    if not local or any(p is None for p in local):
        return None
    files = tuple(file_stats(p) for p in local if p is not None)
    names = {n for f in files for n in f.columns}
    return SourceStats(files, "Parquet footers", exact_bounds=frozenset(names))


def footers_of(df: DataFrame) -> SourceStats | None:
    """The footers' statistics of the files `df` reads (as Spark's file index lists them)."""
    from urllib.parse import unquote

    return footer_stats([unquote(p) for p in df.inputFiles()])
