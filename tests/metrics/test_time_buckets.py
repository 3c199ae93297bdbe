"""Day-one history for a source with a time column: the first run of an anomaly constraint whose
history is empty computes the metric per day over its training window in one grouped pass,
stores it as history and judges against it; the next run adds nothing and reads no more."""

from __future__ import annotations

import datetime as dt

import pytest
from pyspark.sql import functions as F

from checkers import MetricChecker
from checkers.metrics import (
    BatchNormal,
    Check,
    CheckLevel,
    MetricHistory,
    MetricsRepository,
    ResultKey,
    Size,
    TimeBuckets,
)
from tests.metrics.jobs import count_jobs

DAY0 = dt.datetime(2013, 1, 1, tzinfo=dt.UTC)
DAYS = 30


def day(i: int) -> dt.datetime:
    return DAY0 + dt.timedelta(days=i)


@pytest.fixture(scope="module")
def events(spark):
    rows = [
        (day(i) + dt.timedelta(minutes=17 * n),)
        for i in range(DAYS)
        for n in range(40 + (i * 3) % 7)  # 40..46 events a day
    ]
    return spark.createDataFrame(rows, "ts timestamp").cache()


def run(events, repository, judged: int, keep: int | None = None):  # type: ignore[no-untyped-def]
    today = events.where(F.col("ts") >= F.lit(day(judged))).where(
        F.col("ts") < F.lit(day(judged + 1))
    )
    if keep is not None:
        today = today.limit(keep)
    history = MetricHistory(
        repository,
        ResultKey(day(judged)),
        "events",
        training=TimeBuckets(events, "ts", count=21),
    )
    volume = Check(CheckLevel.WARNING, "daily volume").has_no_anomalies(Size(), BatchNormal())
    return MetricChecker(today, [volume], history=history).run()


@pytest.mark.classic_only  # counts jobs through the SparkContext
def test_the_first_run_judges_against_buckets_computed_in_one_pass(spark, events, tmp_path):
    repository = MetricsRepository(f"sqlite:///{tmp_path / 'metrics.db'}")
    first, jobs = count_jobs(spark, lambda: run(events, repository, 25, keep=10))
    assert first.failing == 1  # 10 events against 21 days of 40..46
    assert "from 21 earlier runs" in first.sample()[0]["reason"]
    stored = repository.history(Size(), source_table="events", before=day(25))
    assert [t for t, _ in stored] == [day(i) for i in range(4, 25)]
    assert dict(stored)[day(4)] == 40 + 12 % 7
    _, plain = count_jobs(spark, lambda: run(events, repository, 25, keep=10))
    assert jobs == plain + 1  # the history: one grouped pass over the window

    second = run(events, repository, 26)  # a normal day: the buckets are there already
    assert second.failing == 0
    # the 21 buckets, and the three runs' own points (day 25 twice, day 26)
    assert len(repository.query(source_table="events", before=day(26))) == 21 + 3


def test_buckets_are_declared_sensibly(events):
    with pytest.raises(ValueError, match="'day' or 'hour'"):
        TimeBuckets(events, "ts", every="week")
    hours = TimeBuckets(events, "ts", count=3, every="hour").starts(
        day(1) + dt.timedelta(minutes=5)
    )
    assert hours == [day(1) - dt.timedelta(hours=k) for k in (3, 2, 1)]
