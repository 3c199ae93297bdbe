"""Hive-style partitions of files: listing name=value directories without reading data (os.scandir
for local paths, Spark's file index for other file systems) and the partition key of each row."""

from __future__ import annotations

import hashlib
import os
import re
import urllib.parse
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from pyspark.sql import Column, SparkSession
from pyspark.sql import functions as F

from checkers.parsers.partitions import Partition, period_start

_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
_AUTHORITY = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:(//[^/]*)?")
_GLOB = re.compile(r"([\\{}\[\]*?])")
#: Spark's name for a NULL partition value.
_NULL_VALUE = "__HIVE_DEFAULT_PARTITION__"


@dataclass(frozen=True)
class _File:
    directory: tuple[str, ...]  # segments below the root
    name: str
    path: str
    size: int
    mtime_ns: int


def _hidden(name: str, *, directory: bool) -> bool:
    """Spark's rule for files it skips (_SUCCESS, .crc, _temporary, copies in progress); a
    directory starting with "_" is kept when it is a name=value level."""
    if name.startswith(".") or name.endswith("._COPYING_"):
        return True
    return name.startswith("_") and not (directory and "=" in name)


def local_root(root: str) -> str | None:
    """The local directory of a plain path or file: URI (taken literally, as Hadoop does); None
    for other file systems."""
    if root.startswith("file:"):
        return re.sub(r"^file:(//[^/]*)?", "", root) or "/"
    return None if _SCHEME.match(root) else root


def _scan(root: str) -> Iterator[_File]:
    if not os.path.isdir(root):
        raise FileNotFoundError(f"{root} is not a directory")
    pending: list[tuple[str, tuple[str, ...]]] = [(os.path.abspath(root), ())]
    while pending:
        directory, segments = pending.pop()
        with os.scandir(directory) as entries:
            for entry in entries:
                if entry.is_dir():
                    if not _hidden(entry.name, directory=True):
                        pending.append((entry.path, (*segments, entry.name)))
                elif entry.is_file() and not _hidden(entry.name, directory=False):
                    stat = entry.stat()
                    yield _File(segments, entry.name, entry.path, stat.st_size, stat.st_mtime_ns)


def _spark_listing(spark: SparkSession, root: str) -> Iterator[_File]:
    """Files under `root` from Spark's file index: paths, sizes and times, never the content."""
    rows = (
        spark.read.format("binaryFile")
        .option("recursiveFileLookup", "true")
        .load(root)
        .select("path", "length", F.unix_micros("modificationTime").alias("micros"))
        .collect()
    )
    base = re.sub("/+", "/", _AUTHORITY.sub("", root)).rstrip("/") + "/"
    for row in rows:
        path = re.sub("/+", "/", _AUTHORITY.sub("", row["path"]))
        if not path.startswith(base):
            raise ValueError(f"Spark listed {row['path']} outside {root}")
        *directory, name = path[len(base) :].split("/")
        if not _hidden(name, directory=False) and not any(
            _hidden(d, directory=True) for d in directory
        ):
            yield _File(tuple(directory), name, row["path"], row["length"], row["micros"] * 1000)


def _segment(text: str) -> tuple[str, str | None]:
    name, _, value = text.partition("=")
    return urllib.parse.unquote(name), (
        None if value == _NULL_VALUE else urllib.parse.unquote(value)
    )


def _is_level(segment: str) -> bool:
    name, sep, value = segment.partition("=")
    return bool(name and sep and value)


def _fingerprint(files: Sequence[_File]) -> str:
    digest = hashlib.sha256()
    for f in sorted(files, key=lambda f: f.name):
        digest.update(f"{f.name}\0{f.size}\0{f.mtime_ns}\n".encode())
    return digest.hexdigest()


def _partition(directory: tuple[str, ...], files: list[_File]) -> Partition:
    decoded = [_segment(s) for s in directory]
    return Partition(
        key="/".join(directory),
        fingerprint=_fingerprint(files),
        ts=period_start([(n, v) for n, v in decoded if v is not None]),
        paths=tuple(sorted(f.path for f in files)),
    )


def _grouped(files: Iterator[_File], columns: tuple[str, ...], root: str) -> list[Partition]:
    by_directory: dict[tuple[str, ...], list[_File]] = {}
    for f in files:
        by_directory.setdefault(f.directory, []).append(f)
    layouts: dict[tuple[str, ...], str] = {}
    for directory, found in by_directory.items():
        where = "/".join([*directory, found[0].name])
        if not directory or not all(_is_level(s) for s in directory):
            raise ValueError(f"{where} under {root} is not in a name=value directory")
        names = tuple(_segment(s)[0] for s in directory)
        if columns and names != columns:
            raise ValueError(
                f"{where} under {root} is partitioned by {'/'.join(names)}, "
                f"declared {'/'.join(columns)}"
            )
        layouts.setdefault(names, where)
    if len(layouts) > 1:
        shapes = "; ".join(f"{'/'.join(n)} ({w})" for n, w in layouts.items())
        raise ValueError(f"{root} mixes partition layouts: {shapes}")
    return [_partition(d, found) for d, found in by_directory.items()]


def list_partitions(spark: SparkSession, root: str, columns: tuple[str, ...]) -> list[Partition]:
    """The partitions under `root`: leaf name=value directories holding data files."""
    local = local_root(root)
    files = _scan(local) if local is not None else _spark_listing(spark, root)
    return sorted(_grouped(files, columns, root), key=lambda p: p.key)


def spark_path(path: str) -> str:
    """`path` as Spark reads it literally (glob characters escaped)."""
    return _GLOB.sub(r"\\\1", path)


def key_column(depth: int) -> Column:
    """Each row's partition key: the `depth` directories above its file, as on disk. Spark gives
    the path URI-encoded: those directories are cut out first, then decoded only when they hold
    an escape ("+" protected, as url_decode would read it as a space). Every row computes it, so
    it stays cheap: at SF10, a grouped pass over 27 M lines by this key took 6.4 s with the whole
    path decoded, split and joined, 3.4 s so (1.3 s by a partition column)."""
    path = F.col("_metadata.file_path")
    directories = F.substring_index(F.substring_index(path, "/", -(depth + 1)), "/", depth)
    escaped = F.url_decode(F.replace(directories, F.lit("+"), F.lit("%2B")))
    return F.when(F.instr(directories, "%") > 0, escaped).otherwise(directories)
