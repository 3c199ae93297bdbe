"""The incremental floor, counted in Spark jobs: a run whose work is one new partition costs at
most 4 jobs (row predicates and a metric suite with Uniqueness and ApproxQuantile, sharing one
pass), and a first run's jobs do not grow with the number of partitions (one grouped pass by
partition for the counts and sketches, one query for every partition's frequency tables)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pandas as pd
import pytest
import sqlalchemy as sa

from checkers import MetricChecker, PredicateSingleDatasetChecker
from checkers.metrics import Check, CheckLevel
from checkers.parsers import HivePartitions, ParquetParser
from checks import QualityCheck
from checks.incremental import Incremental
from scheduling.drift import differences
from scheduling.schema import migrate
from scheduling.tick.evaluate import evaluate_checks
from scheduling.tick.partition_store import PartitionStore
from tests.checks.test_incremental import write_day
from tests.metrics.jobs import count_jobs

pytestmark = pytest.mark.classic_only  # jobs are counted through the SparkContext

START = dt.date(2024, 1, 1)
NOW = dt.datetime(2024, 6, 1, tzinfo=dt.UTC)


def day_frame(i: int) -> pd.DataFrame:
    """Eight flights of day `i`: one missing dep_time on even days, one late departure on each
    of the first three days (as many failures whatever the number of days)."""
    rows = [
        {
            "carrier": "AA" if n % 2 else "UA",
            "flight": n,
            "hour": n,
            "dep_time": None if (n == 0 and i % 2 == 0) else 600.0 + n,
            "dep_delay": 200.0 if (n == 7 and i < 3) else float(n),
            "arr_delay": float((i * 7 + n * 3) % 50),
        }
        for n in range(8)
    ]
    return pd.DataFrame(rows)


def lake(root: Path, days: int) -> None:
    for i in range(days):
        write_day(root, START + dt.timedelta(days=i), day_frame(i))


def _checks(root: Path, suffix: str) -> list[type[QualityCheck]]:
    source = ParquetParser(str(root), partitioning=HivePartitions(("day",)))

    class ShortDelays(QualityCheck, register=False):
        name = f"short_delays_{suffix}"
        parser = source
        incremental = Incremental()

        def checker(self, flights):
            return PredicateSingleDatasetChecker(
                flights, "dep_delay IS NULL OR dep_delay < 120", key="flight"
            )

    class FlightSuite(QualityCheck, register=False):
        name = f"flight_suite_{suffix}"
        parser = source
        incremental = Incremental()

        def checker(self, flights):
            return MetricChecker(
                flights,
                [
                    Check(CheckLevel.ERROR, "flights")
                    .has_completeness("dep_time", lambda v: v > 0.9)
                    .has_uniqueness(["day", "carrier", "flight"], lambda v: v == 1.0)
                    .has_approx_quantile("arr_delay", 0.5, lambda v: v < 40)
                ],
            )

    return [ShortDelays, FlightSuite]


@pytest.fixture
def store(tmp_path) -> PartitionStore:
    engine = sa.create_engine(f"sqlite:///{tmp_path / 'dq.db'}")
    migrate(engine)
    return PartitionStore(engine, tmp_path / "states")


def _run(spark, checks, store):
    return count_jobs(
        spark, lambda: evaluate_checks(checks, spark=spark, now=NOW, partitions=store)
    )


@pytest.fixture
def listing_on_the_driver(spark):
    """Spark lists more than 32 paths with a job of its own (one, however many paths): listed on
    the driver here, so the counts compare our passes alone."""
    key = "spark.sql.sources.parallelPartitionDiscovery.threshold"
    before = spark.conf.get(key)
    spark.conf.set(key, "1000")
    yield
    spark.conf.set(key, before)


@pytest.mark.usefixtures("listing_on_the_driver")
def test_a_first_run_over_60_partitions_takes_no_more_jobs_than_over_6(spark, tmp_path, store):
    jobs = {}
    for days in (6, 60):
        root = tmp_path / f"lake{days}"
        lake(root, days)
        checks = _checks(root, str(days))
        outcomes, jobs[days] = _run(spark, checks, store)
        assert all(o.error is None for o in outcomes), [o.error for o in outcomes]
        assert [o.reading["partitions_read"] for o in outcomes] == [days, days]
        assert outcomes[0].failing == 3
    assert jobs[60] <= jobs[6], jobs


def test_one_new_partition_costs_at_most_4_jobs_and_equals_a_recomputation(spark, tmp_path, store):
    root = tmp_path / "lake"
    lake(root, 6)
    checks = _checks(root, "floor")
    evaluate_checks(checks, spark=spark, now=NOW, partitions=store)
    write_day(root, START + dt.timedelta(days=6), day_frame(6))
    outcomes, jobs = _run(spark, checks, store)
    assert [o.reading["partitions_read"] for o in outcomes] == [1, 1]
    assert jobs <= 4, jobs
    scratch = evaluate_checks(checks, spark=spark, now=NOW, full=True)
    for mine, full in zip(outcomes, scratch, strict=True):
        assert mine.error is None, mine.error
        assert differences(mine, full) == [], mine.check
