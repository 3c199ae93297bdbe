"""The incremental floor, counted in Spark jobs: a run whose work is one new partition costs at
most 4 jobs (row predicates and a metric suite with Uniqueness and ApproxQuantile, sharing one
pass), the runs that write a new rollup of the frequency tables too, and a first run's jobs do
not grow with the number of partitions (one grouped pass by partition for the counts and
sketches, one query for every partition's frequency tables)."""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pytest
import sqlalchemy as sa

from checkers import PredicateSingleDatasetChecker
from checkers.engine_tables import partition_states
from checkers.metrics.rollups import COVERS, REFRESH_AFTER, ROLLUP
from checkers.parsers import HivePartitions, ParquetParser
from checks import QualityCheck
from scheduling.tick.evaluate import evaluate_checks
from scheduling.tick.partition_store import PartitionStore
from tests.incremental_helpers import (
    incremental_check,
    incremental_metrics,
    partition_store,
    same_as_scratch,
    write_day,
)
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

    short_delays = incremental_check(
        f"short_delays_{suffix}",
        source,
        lambda flights: PredicateSingleDatasetChecker(
            flights, "dep_delay IS NULL OR dep_delay < 120", key="flight"
        ),
    )
    flight_suite = incremental_metrics(
        f"flight_suite_{suffix}",
        source,
        lambda check: (
            check.has_completeness("dep_time", lambda v: v > 0.9)
            .has_uniqueness(["day", "carrier", "flight"], lambda v: v == 1.0)
            .has_approx_quantile("arr_delay", 0.5, lambda v: v < 40)
        ),
    )
    return [short_delays, flight_suite]


def _run(spark, checks, store):
    return count_jobs(
        spark, lambda: evaluate_checks(checks, spark=spark, now=NOW, partitions=store)
    )


@pytest.fixture(scope="module")
def listing_on_the_driver(spark):
    """Spark lists more than 32 paths with a job of its own (one, however many paths): listed on
    the driver here, so the counts compare our passes alone."""
    key = "spark.sql.sources.parallelPartitionDiscovery.threshold"
    before = spark.conf.get(key)
    spark.conf.set(key, "1000")
    yield
    spark.conf.set(key, before)


@dataclass
class FirstRuns:
    """The first runs over 6 and 60 days (written once per module), their outcomes and jobs,
    the store they filled and where the 6 days lie."""

    outcomes: dict[int, list]
    jobs: dict[int, int]
    store: PartitionStore
    lake6: Path
    checks6: list[type[QualityCheck]]


@pytest.fixture(scope="module")
def first_runs(spark, tmp_path_factory, listing_on_the_driver) -> FirstRuns:
    root = tmp_path_factory.mktemp("floor")
    store = partition_store(root)
    outcomes, jobs, checks = {}, {}, {}
    for days in (6, 60):
        lake(root / f"lake{days}", days)
        checks[days] = _checks(root / f"lake{days}", str(days))
        outcomes[days], jobs[days] = _run(spark, checks[days], store)
    return FirstRuns(outcomes, jobs, store, root / "lake6", checks[6])


def test_a_first_run_over_60_partitions_takes_no_more_jobs_than_over_6(first_runs):
    for days, outcomes in first_runs.outcomes.items():
        assert all(o.error is None for o in outcomes), [o.error for o in outcomes]
        assert [o.reading["partitions_read"] for o in outcomes] == [days, days]
        assert outcomes[0].failing == 3
    assert first_runs.jobs[60] <= first_runs.jobs[6], first_runs.jobs


def test_one_new_partition_costs_at_most_4_jobs_and_equals_a_recomputation(spark, first_runs):
    checks, store = first_runs.checks6, first_runs.store
    write_day(first_runs.lake6, START + dt.timedelta(days=6), day_frame(6))
    outcomes, jobs = _run(spark, checks, store)
    assert [o.reading["partitions_read"] for o in outcomes] == [1, 1]
    assert jobs <= 4, jobs
    same_as_scratch(spark, checks, outcomes, NOW)


def outside_rollup(store: PartitionStore, check: str) -> int:
    """How many of the check's stored partitions its stored rollup does not name."""
    table = partition_states
    query = sa.select(table.c.payload).where(
        table.c.check_name == check, table.c.partition_key == ROLLUP
    )
    with store.engine.connect() as connection:
        payloads = [json.loads(p) for p in connection.execute(query).scalars()]
    covered = set.intersection(*(set(p[COVERS]) for p in payloads)) if payloads else set()
    return len(set(store.known(check)) - covered)


def test_every_run_over_one_new_partition_costs_at_most_4_jobs_rollup_refreshes_included(
    spark, tmp_path, listing_on_the_driver
):
    store, root = partition_store(tmp_path), tmp_path / "lake"
    lake(root, 6)
    checks = _checks(root, "days")
    _run(spark, checks, store)
    assert outside_rollup(store, "flight_suite_days") == 0  # the first run rolled up every day
    jobs, outside = [], []
    for i in range(6, 6 + REFRESH_AFTER + 2):
        write_day(root, START + dt.timedelta(days=i), day_frame(i))
        outcomes, spent = _run(spark, checks, store)
        assert [o.reading["partitions_read"] for o in outcomes] == [1, 1]
        same_as_scratch(spark, checks, outcomes, NOW)
        jobs.append(spent)
        outside.append(outside_rollup(store, "flight_suite_days"))
    # The rollup grew stale by one table a run until the run that rolled them all up anew.
    assert outside == [1, 2, 3, 4, 5, 6, 7, 0, 1, 2], outside
    assert max(jobs) <= 4, jobs
