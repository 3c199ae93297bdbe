"""Partitioned sources: how a parser's data splits into partitions (name=value directories, or the
values of a column), and what a listed partition is. A partition's fingerprint changes whenever its
data does, so an incremental check reads only new or changed partitions."""

from __future__ import annotations

import datetime as dt
import re
from abc import ABC
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

#: The string column `Parser.read_partitions` adds: the key of the partition each row comes from.
PARTITION_COLUMN = "__dq_partition"

_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_DATETIME = re.compile(
    r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?(Z|[+-]\d{2}:?\d{2})?"
)
_CALENDAR = ("year", "month", "day", "hour")


@dataclass(frozen=True)
class Partition:
    """One partition of a source, as listed by `Parser.partitions` (no data is read to list it).

    `key` is stable across runs: for files the name=value directories as on disk
    (`"year=2013/month=01"`), for a column `f"{column}={value}"` with the value rendered as Spark's
    `cast(value AS string)`. `ts` is the UTC start of the period the partition names, when its
    values name one; `paths` are a file partition's data files, `value` a column partition's value.
    """

    key: str
    fingerprint: str
    ts: dt.datetime | None = None
    paths: tuple[str, ...] = ()
    value: object = None


class Partitioning(ABC):
    """How a source is partitioned: `HivePartitions` for files, `PartitionColumn` for tables and
    queries."""

    #: Which sources the kind fits, for the message when a parser is given the wrong kind.
    fits: ClassVar[str]


@dataclass(frozen=True)
class HivePartitions(Partitioning):
    """Files in name=value directories (`day=2013-01-05/part-0.parquet`), as Spark writes them
    with `partitionBy`. `columns` names the directory levels in order; empty: whatever levels
    the source has, the same for every partition.

    >>> ParquetParser("s3a://lake/bookings", partitioning=HivePartitions(("year", "month")))
    """

    columns: tuple[str, ...] = ()
    fits: ClassVar[str] = "file sources (CsvParser, JsonParser, ParquetParser)"

    def __post_init__(self) -> None:
        object.__setattr__(self, "columns", tuple(self.columns))
        if any(not c or "=" in c or "/" in c for c in self.columns):
            raise ValueError(f"HivePartitions columns must be directory names: {self.columns}")


@dataclass(frozen=True)
class PartitionColumn(Partitioning):
    """Rows grouped by the values of `column`. `changed` is a column whose maximum grows on every
    insert or update (`updated_at`, a version, a sequence): a partition whose row count and
    maximum `changed` stay the same is taken as unchanged.

    >>> TableParser("bookings", partitioning=PartitionColumn("day", changed="updated_at"))
    """

    column: str
    changed: str = ""
    fits: ClassVar[str] = "tables and queries (TableParser, SqlQueryParser)"

    def __post_init__(self) -> None:
        if not self.column:
            raise ValueError("PartitionColumn needs the column whose values name the partitions")
        if not self.changed:
            raise ValueError(
                f"PartitionColumn({self.column!r}) needs changed=: a column whose maximum grows on "
                "every insert or update (updated_at, a version, a sequence), so a changed "
                "partition is noticed without reading it"
            )


@dataclass(frozen=True)
class DataFiles(Partitioning):
    """A table format's snapshot as its data files: each file is a partition (files never
    change, so a new snapshot's added files are the new partitions and its removed files the
    deleted ones). Delta and Iceberg tables are partitioned this way.

    >>> DeltaParser("s3a://lake/bookings")  # partitioning=DataFiles() is its default
    """

    fits: ClassVar[str] = "table formats (DeltaParser, IcebergParser)"


def _ts_of_text(text: str) -> dt.datetime | None:
    try:
        if _DATE.fullmatch(text):
            return dt.datetime.combine(dt.date.fromisoformat(text), dt.time(), dt.UTC)
        if _DATETIME.fullmatch(text):
            return as_utc(dt.datetime.fromisoformat(text))
    except ValueError:  # 2013-02-30
        return None
    return None


def as_utc(value: dt.datetime) -> dt.datetime:
    """A naive datetime is taken as UTC; an aware one is converted."""
    return value.replace(tzinfo=dt.UTC) if value.tzinfo is None else value.astimezone(dt.UTC)


def ts_of_value(value: object) -> dt.datetime | None:
    """The start of the period a column value names: a date, a timestamp, or their ISO text."""
    if isinstance(value, dt.datetime):
        return as_utc(value)
    if isinstance(value, dt.date):
        return dt.datetime.combine(value, dt.time(), dt.UTC)
    return _ts_of_text(value) if isinstance(value, str) else None


def _calendar(values: dict[str, str]) -> dt.datetime | None:
    given = [name for name in _CALENDAR if name in values]
    if tuple(given) != _CALENDAR[: len(given)] or not all(values[n].isdigit() for n in given):
        return None  # a gap (year and day, no month) names no period
    year, month, day, hour = [int(values[n]) for n in given] + [1, 1, 0][len(given) - 1 :]
    try:
        return dt.datetime(year, month, day, hour, tzinfo=dt.UTC)
    except ValueError:
        return None


def period_start(segments: Sequence[tuple[str, str]]) -> dt.datetime | None:
    """The UTC start of the period named by decoded name=value pairs: `year=`/`month=`/`day=`/
    `hour=` levels, or one ISO date or timestamp value (`day=2013-01-05`, `dt=...`), optionally
    with `hour=`. None when the values name no period, or more than one."""
    values = {name.lower(): value for name, value in segments}
    if "year" in values:
        return _calendar(values)
    dated = [(v, ts) for _, v in segments if (ts := _ts_of_text(v)) is not None]
    if len(dated) != 1:
        return None
    value, ts = dated[0]
    hour = values.get("hour")
    if hour is None or not _DATE.fullmatch(value):
        return ts
    if not hour.isdigit() or int(hour) > 23:
        return None
    return ts + dt.timedelta(hours=int(hour))
