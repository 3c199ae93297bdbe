"""Acceptance 4 (issue 26): an anomaly check added to an incremental flights check on day 40
judges on its first run against the 39 earlier partitions, whose metrics come from the states
the incremental check stored (a view: no data read, no Spark job to build the history)."""

from __future__ import annotations

import datetime as dt

import pandas as pd
import pytest

from checkers import MetricChecker
from checkers.metrics import (
    BatchNormal,
    Check,
    CheckLevel,
    MetricHistory,
    MetricsRepository,
    ResultKey,
    Size,
)
from checkers.outcome import Status
from checkers.parsers import HivePartitions, ParquetParser
from checks import QualityCheck
from checks.incremental import Incremental
from scheduling.tick.evaluate import evaluate_checks
from tests.incremental_helpers import partition_store, write_day
from tests.metrics.jobs import count_jobs

FIRST = dt.date(2013, 1, 1)
DAYS = [FIRST + dt.timedelta(days=i) for i in range(40)]  # day 40 is the last
JOBS_TO_READ_ONE_PARTITION = 1


def flights(day: int, rows: int | None = None) -> pd.DataFrame:
    count = rows if rows is not None else 40 + (day * 7) % 11  # 40..50 flights a day
    return pd.DataFrame({"carrier": ["UA", "AA", "B6", "DL"] * (count // 4) + ["UA"] * (count % 4)})


@pytest.fixture(scope="module")
def lake(tmp_path_factory):
    root = tmp_path_factory.mktemp("day_one") / "lake"
    for i, day in enumerate(DAYS[:39]):
        write_day(root, day, flights(i))
    return root


def checks(lake, url):  # type: ignore[no-untyped-def]
    """The flights check as it ran for 39 days, and the same check with an anomaly constraint
    on each day's volume added on day 40 (the same name, source and analyzers: its stored
    states still hold)."""
    source = ParquetParser(str(lake), partitioning=HivePartitions(("day",)))

    class Flights(QualityCheck, register=False):
        name = "flights_daily"
        parser = source
        incremental = Incremental()

        def checker(self, data):  # type: ignore[no-untyped-def]
            return MetricChecker(data, [Check(CheckLevel.ERROR, "carriers").is_complete("carrier")])

    class FlightsWithVolume(Flights, register=False):
        name = "flights_daily"

        def checker(self, data):  # type: ignore[no-untyped-def]
            history = MetricHistory(MetricsRepository(url), ResultKey(self.now), "flights")
            volume = Check(CheckLevel.WARNING, "daily volume").has_no_anomalies(
                Size(), BatchNormal(), per_partition=True
            )
            carriers = Check(CheckLevel.ERROR, "carriers").is_complete("carrier")
            return MetricChecker(data, [carriers, volume], history=history)

    return Flights, FlightsWithVolume


@pytest.mark.classic_only  # counts jobs through the SparkContext
def test_an_anomaly_check_added_on_day_40_judges_from_its_first_run(spark, lake, tmp_path):
    url = f"sqlite:///{tmp_path / 'dq.db'}"
    store = partition_store(tmp_path, url)
    flights_check, with_volume = checks(lake, url)
    day39 = dt.datetime(2013, 2, 9, 6, tzinfo=dt.UTC)
    [first] = evaluate_checks([flights_check], spark=spark, now=day39, partitions=store)
    assert first.status is Status.PASSED and first.reading["partitions_read"] == 39

    write_day(lake, DAYS[39], flights(39, rows=8))  # day 40: most of the flights lost
    day40 = day39 + dt.timedelta(days=1)
    [judged], jobs = count_jobs(
        spark,
        lambda: evaluate_checks([with_volume], spark=spark, now=day40, partitions=store),
    )
    assert judged.reading["partitions_read"] == 1  # only the new day is read
    assert judged.status is Status.FAILED
    [flagged] = judged.sample
    assert "partition day=2013-02-09: value 8" in flagged["reason"]
    assert "from 39 earlier partitions" in flagged["reason"]
    assert jobs == JOBS_TO_READ_ONE_PARTITION  # none more for the history

    history = MetricsRepository(url).query(per_partition=True, names=["Size"])
    assert len({r.partition_id for r in history}) == 40
    assert {r.value for r in history if r.partition_id == "day=2013-01-01"} == {
        float(len(flights(0)))
    }


def test_backtest_replays_the_day_one_history_of_stored_partitions(spark, tmp_path):
    from scheduling.cli.backtest import check_reports
    from scheduling.schema import project_database
    from scheduling.settings import Settings

    lake = tmp_path / "lake"
    for i, day in enumerate(DAYS[:20]):
        write_day(lake, day, flights(i))
    url = f"sqlite:///{tmp_path / 'dq.db'}"
    store = partition_store(tmp_path, url)
    flights_check, with_volume = checks(lake, url)
    day20 = dt.datetime(2013, 1, 21, 6, tzinfo=dt.UTC)
    evaluate_checks([flights_check], spark=spark, now=day20, partitions=store)  # no history

    engine = project_database(url)
    settings = Settings(engine, {}, None, state_dir=tmp_path)  # type: ignore[arg-type]
    [report] = check_reports(with_volume, settings, day20, inject=True)  # type: ignore[misc]
    assert (report["points"], report["from_states"]) == (20, 20)
    assert (report["first"], report["last"]) == (
        "2013-01-01T00:00:00+00:00",
        "2013-01-20T00:00:00+00:00",
    )
    medium = {r["sensitivity"]: r for r in report["replays"]}["medium"]
    assert medium["judged"] == 20 - 2  # BatchNormal needs two points of history
    assert medium["recall"]["missing partition"] == 1.0
    assert MetricsRepository(url).query(per_partition=True) == []  # a replay saves nothing


@pytest.mark.classic_only  # counts jobs through the SparkContext
def test_backtest_replays_the_day_one_buckets_of_a_dated_source(spark, tmp_path):
    """A non-incremental dated source without stored history: `dq backtest` replays the
    TimeBuckets its first run would compute (one grouped pass), and saves none of them."""
    from pyspark.sql import functions as F

    from checkers.metrics import TimeBuckets
    from scheduling.cli.backtest import check_reports
    from scheduling.schema import project_database
    from scheduling.settings import Settings

    start = dt.datetime(2013, 1, 1, tzinfo=dt.UTC)
    rows = [
        (start + dt.timedelta(days=i, minutes=29 * n),)
        for i in range(25)
        for n in range(10 if i == 15 else 40 + (i * 3) % 7)  # 40..46 events a day, one quiet
    ]
    path = str(tmp_path / "events")
    spark.createDataFrame(rows, "ts timestamp").write.parquet(path)
    url = f"sqlite:///{tmp_path / 'dq.db'}"
    engine = project_database(url)

    class Events(QualityCheck, register=False):
        name = "daily_events"
        parser = ParquetParser(path, schema="ts timestamp")  # promised: built over it first

        def checker(self, data):  # type: ignore[no-untyped-def]
            day = F.lit(self.now.replace(hour=0)) - F.expr("INTERVAL 1 DAY")
            yesterday = data.where((F.col("ts") >= day) & (F.col("ts") < F.lit(self.now)))
            training = TimeBuckets(data, "ts", count=21)
            key = ResultKey(self.now.replace(hour=0))
            history = MetricHistory(MetricsRepository(url), key, "events", training=training)
            volume = Check(CheckLevel.WARNING, "daily volume").has_no_anomalies(
                Size(), BatchNormal()
            )
            return MetricChecker(yesterday, [volume], history=history)

    settings = Settings(engine, {}, None, state_dir=tmp_path)  # type: ignore[arg-type]
    now = dt.datetime(2013, 1, 25, 6, tzinfo=dt.UTC)
    found, jobs = count_jobs(spark, lambda: check_reports(Events, settings, now, inject=False))
    [report] = found  # type: ignore[misc]
    assert (report["points"], report["from_buckets"], report["from_states"]) == (21, 21, 0)
    assert (report["first"], report["last"]) == (
        "2013-01-04T00:00:00+00:00",
        "2013-01-24T00:00:00+00:00",
    )
    medium = {r["sensitivity"]: r for r in report["replays"]}["medium"]
    assert medium["judged"] == 21 - 2 and medium["alerts"] == 1  # the source's quiet day
    assert jobs == 1  # the buckets: one grouped pass
    assert MetricsRepository(url).query() == []  # a replay saves nothing
    engine.dispose()
