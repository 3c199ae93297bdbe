"""What a source's files already know about their data: rows, NULLs and bounds per file, as Parquet
footers, Delta's log and Iceberg's manifests record them. A parser that knows them attaches them
to the DataFrame it builds (`attach_stats`); the runner answers metrics from them where exact
(`checkers.metrics.metadata_answers`)."""

from __future__ import annotations

import weakref
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from pyspark.sql import DataFrame


@dataclass(frozen=True)
class ColumnStats:
    """One column in one file. None: the file does not record it (absent is not zero)."""

    nulls: int | None = None
    minimum: object = None
    maximum: object = None


@dataclass(frozen=True)
class FileStats:
    """One data file: its size in bytes, rows (None when unrecorded) and per-column statistics."""

    path: str
    size: int
    rows: int | None
    columns: Mapping[str, ColumnStats] = field(default_factory=dict)


@dataclass(frozen=True)
class SourceStats:
    """Every data file of the source's snapshot. `exact_bounds` names the columns whose recorded
    bounds are the true minimum and maximum (never truncated or widened); `problem` says why
    no metric may come from these statistics (row-level deletes apply), None when they may.
    `origin` names them for people (`Delta log`)."""

    files: tuple[FileStats, ...]
    origin: str
    exact_bounds: frozenset[str] = frozenset()
    problem: str | None = None

    @property
    def bytes(self) -> int:
        return sum(f.size for f in self.files)


StatsProvider = Callable[[], SourceStats | None]

#: DataFrames as their parser built them, and how to get their files' statistics (lazily: a
#: footer read is I/O a run that answers nothing from metadata should not pay).
_attached: weakref.WeakKeyDictionary[DataFrame, StatsProvider] = weakref.WeakKeyDictionary()


def attach_stats(df: DataFrame, provider: StatsProvider) -> DataFrame:
    """Remember how to get `df`'s file statistics. Only this very DataFrame carries them: a
    filter or projection of it is other data, and is scanned."""
    _attached[df] = provider
    return df


def stats_of(df: DataFrame) -> SourceStats | None:
    """The file statistics attached to `df`, or None (none attached, or they cannot be read:
    the metrics are then scanned)."""
    provider = _attached.get(df)
    if provider is None:
        return None
    try:
        return provider()
    except Exception:  # statistics are an optimisation: without them the data is scanned
        return None
