"""Where the first malformed record of a CSV or JSON-lines source is: its file and line. Spark's
FAILFAST error names neither the line nor (always) the file, so on a failed scan the same files are
read again, PERMISSIVE, and the record's line is found in a plain-text read of its file. Only
hashes of the record's text leave the executors: it may hold personal data."""

from __future__ import annotations

import re
import urllib.parse
from dataclasses import dataclass

from pyspark.sql import Column, DataFrame, DataFrameReader
from pyspark.sql import functions as F
from pyspark.sql.types import StringType, StructField, StructType

from checkers.parsers.partitions import PARTITION_COLUMN

_CORRUPT = "__dq_malformed_record"
_PARTITION_DIRECTORY = re.compile(r"^([^/=]+)=[^/]*$")


@dataclass(frozen=True)
class MalformedAt:
    """The first malformed record of a source: its file and the line it starts on (1-based, the
    header counted)."""

    file: str
    line: int

    def __str__(self) -> str:
        return f"{self.file}, line {self.line}"


def first_malformed(
    reader: DataFrameReader, frame: DataFrame, *, header: bool
) -> MalformedAt | None:
    """The first malformed record of the files behind `frame` (read by `reader`, the source's own
    reader and options), or None when PERMISSIVE parsing finds none. Two Spark jobs."""
    files = list(frame.inputFiles())
    if not files:
        return None
    spark = frame.sparkSession
    data = _data_schema(frame, files)
    if not data.fields:
        return None
    schema = StructType([*data.fields, StructField(_CORRUPT, StringType())])
    read = (
        reader.schema(schema)
        .option("mode", "PERMISSIVE")
        .option("columnNameOfCorruptRecord", _CORRUPT)
        .load(files)
    )
    # Every column is kept in the projection, so each is parsed (not pruned) as in the scan.
    everything = F.xxhash64(*[F.col(f"`{f.name}`") for f in data.fields])
    first = (
        read.select(
            F.col("_metadata.file_path").alias("file"),
            F.col("_metadata.file_block_start").alias("block"),
            F.monotonically_increasing_id().alias("row"),
            _first_line_hash(F.col(_CORRUPT)).alias("hash"),
            everything.alias("parsed"),
        )
        .where(F.col(_CORRUPT).isNotNull())
        .orderBy("file", "block", "row")
        .select("file", "hash", "parsed")  # "parsed" kept: no column is pruned
        .limit(1)
        .collect()
    )
    if not first:
        return None
    path, digest = first[0]["file"], first[0]["hash"]
    line = _line_of(spark.read.text(path), digest, skip_first=header)
    return None if line is None else MalformedAt(_readable(path), line)


def _first_line_hash(text: Column) -> Column:
    """A record that runs over several lines (multiLine CSV) is found by its first line."""
    return F.xxhash64(F.split(text, "\r?\n|\r").getItem(0))


def _line_of(lines: DataFrame, digest: int, *, skip_first: bool) -> int | None:
    """The 1-based number of the first line of `lines` (one text file) whose hash is `digest`:
    lines counted per block of the file (Spark's split), then the blocks summed in file order."""
    marked = lines.select(
        F.col("_metadata.file_block_start").alias("block"),
        F.monotonically_increasing_id().alias("row"),
        (F.xxhash64("value") == F.lit(digest)).alias("hit"),
    )
    blocks = sorted(
        marked.groupBy("block")
        .agg(
            F.count(F.lit(1)).alias("n"),
            F.min("row").alias("first"),
            F.min(F.when(F.col("hit"), F.col("row"))).alias("hit"),
            # the second hit of the first block, for a header that equals the record
            F.min(F.when(F.col("hit") & (F.col("row") > F.lit(0)), F.col("row"))).alias("later"),
        )
        .collect(),
        key=lambda b: b["block"],
    )
    before = 0
    for n, block in enumerate(blocks):
        hit = block["hit"]
        if n == 0 and skip_first and hit == block["first"]:  # the header line
            if block["first"] != 0:
                return None  # the header's row is not known to be 0: no later hit is found
            hit = block["later"]
        if hit is not None:
            return before + hit - block["first"] + 1
        before += block["n"]
    return None


def _data_schema(frame: DataFrame, files: list[str]) -> StructType:
    """The columns inside the files: the frame's, without the run's partition key and the
    columns Spark took from name=value directories (read again file by file, no directory is
    a partition). A directory never shadows a column inside its files (refused when read)."""
    directories = {
        match.group(1).lower()
        for path in files
        for segment in urllib.parse.unquote(path).split("/")[:-1]
        if (match := _PARTITION_DIRECTORY.match(segment))
    }
    kept = [
        f
        for f in frame.schema.fields
        if f.name != PARTITION_COLUMN and f.name.lower() not in directories
    ]
    return StructType(kept)


def _readable(path: str) -> str:
    """A local file as a plain path; other file systems keep their URI."""
    if path.startswith("file:"):
        return urllib.parse.unquote(re.sub(r"^file:(//[^/]*)?", "", path))
    return path
