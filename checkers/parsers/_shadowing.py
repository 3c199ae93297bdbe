"""A Hive partition directory (`day=7/`) whose name is also a column inside the files below it:
Spark silently replaces the column's values with the directory's. Found from the first input
file's path and its own columns (a Parquet footer, a CSV header, a JSON line, read here without
Spark), for local files; other file systems are not looked at."""

from __future__ import annotations

import json
import urllib.parse
from collections.abc import Mapping

from pyspark.sql import DataFrame

from checkers.parsers._base import SourceError
from checkers.parsers._hive import local_root


def refuse_shadowing(
    df: DataFrame, file_format: str, options: Mapping[str, str], what: str
) -> None:
    """Raise SourceError naming the directory and the column when one shadows the other."""
    files = df.inputFiles()
    if not files:
        return
    local = local_root(urllib.parse.unquote(files[0]))
    if local is None:
        return
    segments = [s for s in local.split("/")[:-1] if "=" in s]
    directories = {s.split("=", 1)[0].lower(): s for s in segments}
    if not directories:
        return
    inside = {c.lower() for c in _file_columns(local, file_format, options)}
    for name, segment in directories.items():
        if name in inside:
            raise SourceError(
                f"{what}: the partition directory {segment!r} has the name of the column "
                f"{name!r} inside its files ({local}): Spark would replace the column's values "
                f"with the directory's; rename the column or the directories"
            )


def _file_columns(path: str, file_format: str, options: Mapping[str, str]) -> list[str]:
    try:
        if file_format == "parquet":
            import pyarrow.parquet as pq

            return list(pq.read_schema(path).names)
        with open(path, encoding="utf-8", errors="replace") as handle:
            first = handle.readline()
    except (OSError, ValueError):
        return []  # unreadable here: Spark's read says why
    if file_format == "csv":
        separator = options.get("sep") or options.get("delimiter") or ","
        return [c.strip().strip('"') for c in first.rstrip("\r\n").split(separator)]
    try:
        record = json.loads(first)
    except ValueError:
        return []
    return list(record) if isinstance(record, dict) else []
