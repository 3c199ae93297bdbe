"""Incremental checks judged per segment: states kept per partition and segment, merged per
segment, equal to a recomputation from scratch after an append, a rewritten partition (a new
segment in it, another gone) and a deleted one (the only partition of a segment); one new
partition costs the incremental floor's jobs."""

from __future__ import annotations

import datetime as dt
import os
import shutil
from pathlib import Path

import pandas as pd
import pytest

from alerting import EscalationPolicy
from checkers import MetricChecker
from checkers.metrics import Check, CheckLevel
from checkers.metrics.rollups import ROLLUP
from checkers.parsers import HivePartitions, ParquetParser
from scheduling.drift import guard
from scheduling.schema import project_database
from scheduling.settings import Settings
from scheduling.tick.evaluate import evaluate_checks
from tests.incremental_helpers import (
    incremental_check,
    partition_store,
    same_as_scratch,
    write_day,
)
from tests.metrics.jobs import count_jobs

pytestmark = pytest.mark.classic_only  # jobs are counted through the SparkContext

START = dt.date(2024, 3, 1)
NOW = dt.datetime(2024, 6, 1, tzinfo=dt.UTC)


def day_frame(i: int, carriers: tuple[str, ...] = ("AA", "UA")) -> pd.DataFrame:
    """Four flights per carrier: UA misses a dep_time every day, AA never."""
    return pd.DataFrame(
        [
            {
                "carrier": carrier,
                "flight": n,
                "dep_time": None if (carrier == "UA" and n == 0) else 600.0 + n + i,
                "arr_delay": float((i * 7 + n * 3 + len(carrier)) % 50),
            }
            for carrier in carriers
            for n in range(4)
        ]
    )


def segmented_check(root: Path):
    source = ParquetParser(str(root), partitioning=HivePartitions(("day",)))
    suite = (
        Check(CheckLevel.ERROR, "per_carrier")
        .has_completeness("dep_time", lambda v: v == 1.0)
        .has_mean("dep_time", lambda v: v > 600)
        .has_approx_quantile("arr_delay", 0.5, lambda v: v < 40)
        .has_size(lambda v: v >= 8)
    )
    return incremental_check(
        "per_carrier",
        source,
        lambda data: MetricChecker(data, [suite], segment_by=["carrier"]),
    )


def _run(spark, check, store):
    (outcome,), jobs = count_jobs(
        spark, lambda: evaluate_checks([check], spark=spark, now=NOW, partitions=store)
    )
    assert outcome.error is None, outcome.error
    (scratch,) = same_as_scratch(spark, [check], [outcome], NOW)
    assert outcome.metrics == pytest.approx(scratch.metrics)  # the sketch's too, on tiny data
    return outcome, jobs


def _carriers(outcome) -> set[str]:
    return {key.split("[carrier=")[1].rstrip("]") for key in outcome.metrics}


def _failing(outcome) -> set[tuple[str, str]]:
    assert outcome.failing == len(outcome.sample)
    return {(r["segment"].removeprefix("carrier="), r["constraint"]) for r in outcome.sample}


def _three_days(root: Path) -> None:
    write_day(root, START, day_frame(0, ("AA", "UA", "B6")))  # B6 flies on the first day only
    for i in (1, 2):
        write_day(root, START + dt.timedelta(days=i), day_frame(i))


COMPLETE = "CompletenessConstraint(dep_time)"
SIZE = "SizeConstraint"


def test_segments_merge_per_partition_like_a_recomputation(spark, tmp_path):
    root = tmp_path / "lake"
    store = partition_store(tmp_path)
    check = segmented_check(root)
    _three_days(root)
    first, _ = _run(spark, check, store)
    assert first.reading["partitions_read"] == 3
    assert _carriers(first) == {"AA", "UA", "B6"}
    assert _failing(first) == {("UA", COMPLETE), ("B6", SIZE)}

    write_day(root, START + dt.timedelta(days=3), day_frame(3))  # appended
    appended, jobs = _run(spark, check, store)
    assert appended.reading == {"rows_read": 8, "partitions_read": 1, "partitions": 4}, (
        appended.reading
    )
    assert jobs <= 3, jobs  # counts and moments by partition and segment, then the sketches
    assert appended.metrics["SizeConstraint [carrier=AA]"] == 16.0

    write_day(root, START + dt.timedelta(days=1), day_frame(9, ("UA", "DL")), mtime=1_700_000_000)
    rewritten, _ = _run(spark, check, store)  # AA left day 1, DL arrived
    assert rewritten.reading["partitions_read"] == 1
    assert rewritten.metrics["SizeConstraint [carrier=AA]"] == 12.0
    assert rewritten.metrics["SizeConstraint [carrier=DL]"] == 4.0
    assert _failing(rewritten) == {("UA", COMPLETE), ("B6", SIZE), ("DL", SIZE)}

    shutil.rmtree(root / f"day={START.isoformat()}")  # B6's only partition
    deleted, _ = _run(spark, check, store)
    assert deleted.reading == {"rows_read": 0, "partitions_read": 0, "partitions": 3}
    assert _carriers(deleted) == {"AA", "UA", "DL"}
    sizes = {c: deleted.metrics[f"{SIZE} [carrier={c}]"] for c in ("AA", "UA", "DL")}
    assert sizes == {"AA": 8.0, "UA": 12.0, "DL": 4.0}
    assert _failing(deleted) == {("UA", COMPLETE), ("DL", SIZE)}


def frequency_check(root: Path):
    source = ParquetParser(str(root), partitioning=HivePartitions(("day",)))
    suite = (
        Check(CheckLevel.ERROR, "per_carrier_keys")
        .has_uniqueness("dep_time", lambda v: v == 1.0)
        .has_count_distinct("dep_time", lambda v: v >= 5)
        .has_completeness("dep_time", lambda v: v == 1.0)
    )
    return incremental_check(
        "per_carrier_keys",
        source,
        lambda data: MetricChecker(data, [suite], segment_by=["carrier"]),
    )


UNIQUE = "UniquenessConstraint(dep_time)"
DISTINCT = "CountDistinctConstraint(dep_time)"


def test_frequency_analyzers_per_segment_merge_like_a_recomputation(spark, tmp_path):
    """Uniqueness and CountDistinct per carrier from frequency tables kept per partition with
    the segment in their key: equal to a segmented run from scratch after each change."""
    root = tmp_path / "lake"
    store = partition_store(tmp_path)
    check = frequency_check(root)
    _three_days(root)
    first, _ = _run(spark, check, store)
    assert _carriers(first) == {"AA", "UA", "B6"}
    # dep_time is 600 + n + day: AA's days 0-2 hold 600..605, each day's values once
    assert first.metrics[f"{DISTINCT} [carrier=AA]"] == 6.0
    assert first.metrics[f"{DISTINCT} [carrier=B6]"] == 4.0
    assert first.metrics[f"{UNIQUE} [carrier=B6]"] == 1.0
    assert first.metrics[f"{UNIQUE} [carrier=AA]"] == pytest.approx(2 / 12)  # 600 and 605
    assert ROLLUP in store.states.partitions(check.name)  # every table read: rolled up at once
    assert _failing(first) == {
        ("AA", UNIQUE),
        ("UA", UNIQUE),
        ("UA", COMPLETE),
        ("B6", DISTINCT),
    }

    write_day(root, START + dt.timedelta(days=3), day_frame(3))  # appended
    appended, jobs = _run(spark, check, store)
    assert appended.reading == {"rows_read": 8, "partitions_read": 1, "partitions": 4}
    # the grouped pass, the new partition's frequency table, one aggregation for all segments
    # (over the rollup and the new table)
    assert jobs <= 4, jobs
    assert appended.metrics[f"{DISTINCT} [carrier=AA]"] == 7.0

    write_day(root, START + dt.timedelta(days=1), day_frame(9, ("UA", "DL")), mtime=1_700_000_000)
    rewritten, _ = _run(spark, check, store)  # AA left day 1, DL arrived
    assert rewritten.reading["partitions_read"] == 1
    assert rewritten.metrics[f"{DISTINCT} [carrier=DL]"] == 4.0
    assert rewritten.metrics[f"{UNIQUE} [carrier=DL]"] == 1.0

    shutil.rmtree(root / f"day={START.isoformat()}")  # B6's only partition
    deleted, _ = _run(spark, check, store)
    assert deleted.reading == {"rows_read": 0, "partitions_read": 0, "partitions": 3}
    assert _carriers(deleted) == {"AA", "UA", "DL"}
    assert deleted.metrics[f"{DISTINCT} [carrier=AA]"] == 5.0  # days 2 and 3: 602..606


def test_segmented_checks_refuse_only_analyzers_without_partition_states(spark):
    data = spark.createDataFrame(day_frame(0))
    keys = Check(CheckLevel.ERROR, "keys").has_uniqueness("flight", lambda v: v == 1.0)
    assert MetricChecker(data, [keys], segment_by=["carrier"]).incremental_problem(()) is None
    schema = Check(CheckLevel.ERROR, "schema").has_column_count(lambda v: v == 4)
    problem = MetricChecker(data, [schema], segment_by=["carrier"]).incremental_problem(())
    assert problem is not None and "keeps no state per partition and segment" in problem


def test_the_drift_guard_finds_a_segments_frequency_table_rewritten_alike(
    spark, tmp_path, monkeypatch
):
    """Two dep_times swapped between carriers in one day's file, at its old size and mtime: the
    counts per carrier agree, the frequency tables per carrier do not, and only that day is
    forgotten."""
    root = tmp_path / "lake"
    store = partition_store(tmp_path)
    check = frequency_check(root)
    for i in range(3):
        write_day(root, START + dt.timedelta(days=i), day_frame(i))
    _run(spark, check, store)
    day = START + dt.timedelta(days=2)
    target = root / f"day={day.isoformat()}" / "part-0.parquet"
    before = target.stat()
    frame = day_frame(2)
    aa = frame.index[(frame.carrier == "AA") & (frame.flight == 3)][0]  # 605
    ua = frame.index[(frame.carrier == "UA") & (frame.flight == 1)][0]  # 603
    frame.loc[[aa, ua], "dep_time"] = frame.loc[[ua, aa], "dep_time"].to_numpy()
    write_day(root, day, frame)
    assert target.stat().st_size == before.st_size
    os.utime(target, ns=(before.st_atime_ns, before.st_mtime_ns))

    stale = evaluate_checks([check], spark=spark, now=NOW, partitions=store)[0]
    assert stale.reading["partitions_read"] == 0  # no fingerprint sees the change
    monkeypatch.setenv("DQ_STATE_DIR", str(tmp_path))
    settings = Settings(project_database(str(store.engine.url)), {}, EscalationPolicy(routes={}))
    (report,) = guard([check], [stale], now=NOW, settings=settings, spark=spark)
    assert report.differences
    assert report.full.metrics[f"{DISTINCT} [carrier=AA]"] == 5.0  # 605 left AA
    assert report.forgotten == (f"day={day.isoformat()}",)
    healed, _ = _run(spark, check, store)
    assert healed.reading["partitions_read"] == 1


def test_a_first_run_costs_the_same_jobs_over_three_days_or_twenty(spark, tmp_path):
    """Every partition's frequency tables per segment come from one job, whatever the count."""
    jobs = {}
    for days in (3, 20):
        root = tmp_path / f"lake{days}"
        (tmp_path / f"store{days}").mkdir()
        store = partition_store(tmp_path / f"store{days}")
        for i in range(days):
            write_day(root, START + dt.timedelta(days=i), day_frame(i))
        first, jobs[days] = _run(spark, frequency_check(root), store)
        assert first.reading["partitions_read"] == days
    assert jobs[20] == jobs[3], jobs
