"""Failing samples and failing keys come from the engine's pass: bounded by the sample size,
deterministic (the same rows however the data is partitioned), only failing rows, every failing
row when fewer than the sample size fail, and distinct keys even when one key fails many times."""

from __future__ import annotations

import datetime as dt
import time

import pytest
from pyspark.sql import functions as F

from checkers import (
    KnownBroken,
    OffsetPredicateSingleDatasetChecker,
    PredicateDoubleDatasetsChecker,
    PredicateSingleDatasetChecker,
    run_checkers,
)
from tests.metrics.jobs import count_jobs

# Failing-row samples (binary values too) arrive through Arrow. (tests/connect_paths.py)
pytestmark = pytest.mark.connect


@pytest.fixture(scope="module")
def events(spark):
    """600 rows; `code` fails for ids divisible by 3 (200 rows); key `team` has 4 values, and
    team `t0` holds 150 of the 200 failing rows."""
    return spark.range(600).select(
        F.col("id").cast("int").alias("id"),
        F.when(F.col("id") % 3 == 0, F.lit("bad")).otherwise(F.lit("ok")).alias("code"),
        F.when(F.col("id") % 12 == 0, F.concat(F.lit("t"), (F.col("id") % 36 / 12).cast("int")))
        .otherwise(F.lit("t0"))
        .alias("team"),
        (
            F.lit(dt.datetime(2024, 5, 1, 12, 0, 0, 123456)) + F.make_interval(secs=F.col("id"))
        ).alias("at"),
    )


def _sample(frame, k=20, **options):
    checker = PredicateSingleDatasetChecker(frame, "code = 'ok'", **options)
    checker.sample_size = k
    return checker.run()


def test_sample_is_bounded_failing_only_and_the_same_however_partitioned(events):
    spread, single = _sample(events.repartition(5)), _sample(events.coalesce(1))
    assert spread.failing == 200
    rows = spread.sample()
    assert len(rows) == 20 and len({r["id"] for r in rows}) == 20
    assert all(r["code"] == "bad" and r["id"] % 3 == 0 for r in rows)  # none of the passing rows
    assert set(rows[0]) == {"id", "code", "team", "at"}  # whole rows, JSON-safe
    assert rows[0]["at"].startswith("2024-05-01T12:")
    assert rows == single.sample()  # deterministic: the same rows in the same order
    assert spread.sample(5) == rows[:5]


def test_every_failing_row_when_fewer_than_the_sample_size_fail(events):
    few = events.filter(F.col("id") < 30)  # ids 0, 3, ..., 27 fail
    result = _sample(few)
    assert sorted(r["id"] for r in result.sample()) == list(range(0, 30, 3))


def test_failing_keys_are_distinct_even_when_one_key_dominates(events):
    result = _sample(events.repartition(4), key="team")
    assert result.failing_keys() == ["t0", "t1", "t2"]  # 150 rows of t0 do not crowd out the others
    keyed = _sample(events, key=["team", "id"])
    keys = keyed.failing_keys()
    assert len(keys) == 100 and len({tuple(k) for k in keys}) == 100
    assert keys == _sample(events.coalesce(1), key=["team", "id"]).failing_keys()
    assert keyed.failing_keys(3) == keys[:3]


def test_timestamp_keys_keep_their_microseconds(events):
    result = _sample(events.filter(F.col("id") == 3), key="at")
    assert result.failing_keys() == ["2024-05-01T12:00:03.123456+00:00"]


def test_excused_keys_leave_the_sample_while_unexcused_ones_fail(events):
    checker = PredicateSingleDatasetChecker(events, "code = 'ok'", key="team")
    excused = checker.run(KnownBroken(["t0", "t1"]))
    assert (excused.failing, excused.unexcused) == (200, 16)
    assert {r["team"] for r in excused.sample()} == {"t2"} and len(excused.sample()) == 16
    assert excused.failing_keys() == ["t2"]
    everything = checker.run(KnownBroken(["t0", "t1", "t2"]))
    assert everything.unexcused == 0 and len(everything.sample()) == 20  # all excused: shown
    assert everything.failing_keys() == ["t0", "t1", "t2"]


def test_a_larger_sample_than_the_pass_kept_is_read_by_a_query(events):
    result = _sample(events, k=5)
    assert len(result.sample(50)) == 50  # beyond the pass's 5: the old query path
    assert _sample(events, k=0).sample(0) == []  # sample_size = 0 keeps none


@pytest.mark.classic_only  # counts jobs through the SparkContext
def test_offset_and_two_dataset_samples_cost_no_job_of_their_own(spark, events):
    legs = OffsetPredicateSingleDatasetChecker(
        events, "previous.code = current.code", order_by=["id"], partition_by=["team"]
    )
    left = events.select("id", "code")
    right = events.filter(F.col("id") % 5 != 0).select("id", "code")
    joined = PredicateDoubleDatasetsChecker(left, right, "left.code = right.code", on="id")

    def evaluate():
        results = run_checkers([legs, joined])
        return [(r.failing, len(r.sample()), r.failing_keys()) for r in results]

    (offset, double), jobs = count_jobs(spark, evaluate)
    assert jobs == 2  # one pass per DataFrame, samples and keys included
    assert offset[0] > 0 and offset[1] == 20 and offset[2] == ["t0"]
    assert double[:2] == (120, 20) and len(double[2]) == 100
    assert all(k % 5 == 0 for k in double[2])


def test_a_sampled_timestamp_carries_its_offset_whatever_the_machines_zone(spark, monkeypatch):
    """Written by Spark in the session's zone (UTC here), with its offset: collected as a
    datetime it would be 01:16 the next day, without an offset, on a machine in Tokyo."""
    df = spark.sql(
        "SELECT timestamp'2026-11-22 16:16:00' AS at, timestamp'2026-11-22 16:16:00.5' AS later, "
        "1 AS id"
    )
    monkeypatch.setenv("TZ", "Asia/Tokyo")
    time.tzset()
    try:
        sample = PredicateSingleDatasetChecker(df, "id < 0").run().sample(5)
    finally:
        monkeypatch.undo()
        time.tzset()
    assert sample == [
        {"at": "2026-11-22T16:16:00+00:00", "later": "2026-11-22T16:16:00.500000+00:00", "id": 1}
    ]


def test_timestamps_in_structs_arrays_maps_and_failing_keys_carry_their_offset(spark, monkeypatch):
    """Nested timestamps and a timestamp key are written like a top-level one: never a datetime
    of the machine's zone without an offset. The key query beyond the pass's keys too."""
    df = spark.sql(
        "SELECT timestamp'2026-11-22 16:16:00' AS at, "
        "named_struct('seen', timestamp'2026-11-22 16:16:00.25', 'n', 1) AS visit, "
        "array(timestamp'2026-11-22 16:16:00') AS stops, "
        "map('first', timestamp'2026-11-22 16:16:00') AS marks, "
        "cast(NULL AS struct<seen: timestamp>) AS missing, 1 AS id"
    )
    monkeypatch.setenv("TZ", "Asia/Tokyo")
    time.tzset()
    try:
        result = PredicateSingleDatasetChecker(df, "id < 0", key=["at", "id"]).run()
        sample, keys, queried = result.sample(5), result.failing_keys(), result.fetch_keys(500)
    finally:
        monkeypatch.undo()
        time.tzset()
    at = "2026-11-22T16:16:00+00:00"
    assert sample == [
        {
            "at": at,
            "visit": {"seen": "2026-11-22T16:16:00.250000+00:00", "n": 1},
            "stops": [at],
            "marks": {"first": at},
            "missing": None,
            "id": 1,
        }
    ]
    assert keys == queried == [[at, 1]]
