"""`LakeRoot`: every table under a lake path (local or any store pyarrow's file systems reach):
Delta tables (a `_delta_log` directory) and Parquet directories (Parquet files, or Hive
partition directories holding them), found anew on every run."""

from __future__ import annotations

import posixpath
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from checkers.errors import describe_failure
from checkers.table_monitor.history import TableHistory
from checkers.table_monitor.lake_histories import delta_history, parquet_history


def _hidden(path: str) -> bool:
    return posixpath.basename(path).startswith(("_", "."))


def _file_system(path: str) -> tuple[Any, str]:
    from pyarrow import fs

    if "://" in path:
        return fs.FileSystem.from_uri(path)
    return fs.LocalFileSystem(), posixpath.abspath(path)


@dataclass(frozen=True)
class LakeRoot:
    """Every Delta table and Parquet directory under `path`, each named by its path relative to
    it (`sales/orders`). `storage_options` go to delta-rs (credentials come from the
    environment, never from code).

    >>> TableMonitor(LakeRoot("s3://lake/gold"), now=self.now)
    """

    path: str
    storage_options: tuple[tuple[str, str], ...] = field(default=(), kw_only=True)

    def describe(self) -> str:
        return f"tables under {self.path}"

    def histories(self) -> list[TableHistory]:
        fs, root = _file_system(self.path)
        found = []
        for kind, location in _tables(fs, root):
            name = posixpath.relpath(location, root)
            found.append(self._history(fs, kind, name, location))
        return found

    def _history(self, fs: Any, kind: str, name: str, location: str) -> TableHistory:
        try:
            if kind == "delta":
                scheme = self.path.split("://")[0] + "://" if "://" in self.path else ""
                return delta_history(name, scheme + location, dict(self.storage_options))
            return parquet_history(name, location, fs, _parquet_files(fs, location))
        except Exception as exc:  # one unreadable table is that table's finding, not the run's
            return TableHistory(name, location, problem=describe_failure(exc))


def _tables(fs: Any, directory: str) -> Iterator[tuple[str, str]]:
    """(kind, location) of each table below `directory`; a table's own directories are not
    searched further."""
    from pyarrow.fs import FileSelector, FileType

    entries = fs.get_file_info(FileSelector(directory))
    folders = [e for e in entries if e.type == FileType.Directory]
    for entry in sorted(folders, key=lambda e: e.path):
        names = {posixpath.basename(e.path) for e in fs.get_file_info(FileSelector(entry.path))}
        if "_delta_log" in names:
            yield "delta", entry.path
        elif _hidden(entry.path):
            continue
        elif any(n.endswith(".parquet") or "=" in n for n in names):
            yield "parquet", entry.path
        else:
            yield from _tables(fs, entry.path)


def _parquet_files(fs: Any, location: str) -> list[Any]:
    from pyarrow.fs import FileSelector, FileType

    entries = fs.get_file_info(FileSelector(location, recursive=True))
    return [
        e
        for e in entries
        if e.type == FileType.File
        and e.path.endswith(".parquet")
        and not any(_hidden(p) for p in posixpath.relpath(e.path, location).split("/"))
    ]
