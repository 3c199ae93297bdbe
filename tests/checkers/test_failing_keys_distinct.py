"""Failing keys beyond the listed 100: the outcome says how many distinct keys fail, counted in
the engine's pass (a Theta sketch: exact up to 4,096 distinct keys, estimated and marked so
beyond), of unexcused failing elements like the list, and merged over partitions for
incremental checks."""

from __future__ import annotations

import datetime as dt

import pytest
from pyspark.sql import functions as F

from checkers import KnownBroken, PredicateSingleDatasetChecker, Status, run_checkers
from checkers.outcome import CheckOutcome
from checkers.parsers import CallableParser
from checks import QualityCheck
from scheduling.tick.evaluate import evaluate_check
from tests.metrics.jobs import count_jobs

# Failing keys are collected through Arrow. (tests/connect_paths.py)
pytestmark = pytest.mark.connect

NOW = dt.datetime(2013, 12, 31, 7, tzinfo=dt.UTC)


@pytest.fixture(scope="module")
def flights(spark):
    """7,210 flights of 721 unknown tail numbers (10 each), all failing `tail_known`."""
    return spark.range(0, 7210, numPartitions=3).select(
        F.col("id"),
        F.concat(F.lit("N"), (F.col("id") % 721).cast("string")).alias("tailnum"),
        F.lit(False).alias("tail_known"),
    )


def _unknown_tails(frame, **options):
    return PredicateSingleDatasetChecker(frame, "tail_known", key="tailnum", **options)


def test_the_distinct_count_goes_beyond_the_listed_keys(flights):
    result = _unknown_tails(flights).run()
    assert result.failing == 7210
    assert len(result.failing_keys()) == 100
    assert result.keys_distinct == (721, True)  # exact: fewer than 4,096
    assert _unknown_tails(flights.coalesce(1)).run().keys_distinct == (721, True)


def test_the_count_is_of_unexcused_keys_like_the_list(flights):
    excused = [f"N{n}" for n in range(21)]
    result = _unknown_tails(flights).run(KnownBroken(excused))
    assert (result.failing, result.unexcused) == (7210, 7000)
    assert result.keys_distinct == (700, True)
    assert not set(result.failing_keys()) & set(excused)
    everything = _unknown_tails(flights).run(KnownBroken([f"N{n}" for n in range(721)]))
    assert everything.unexcused == 0 and everything.keys_distinct == (721, True)  # all listed


def test_beyond_the_sketch_the_count_is_an_estimate_and_keys_are_still_listed(flights):
    result = PredicateSingleDatasetChecker(flights, "tail_known", key=["tailnum", "id"]).run()
    count, exact = result.keys_distinct
    assert not exact and count == pytest.approx(7210, rel=0.06)
    keys = result.failing_keys()  # the pass's sample lost them: read by a query instead
    assert len(keys) == 100 and len({tuple(k) for k in keys}) == 100


def test_no_key_no_count_and_no_failure_zero(flights):
    assert PredicateSingleDatasetChecker(flights, "tail_known").run().keys_distinct is None
    assert _unknown_tails(flights, name="fine").run().keys_distinct == (721, True)
    passing = PredicateSingleDatasetChecker(flights, "NOT tail_known", key="tailnum").run()
    assert passing.keys_distinct == (0, True)


@pytest.mark.classic_only  # counts jobs through the SparkContext
def test_the_count_costs_no_job_of_its_own(spark, flights):
    def evaluate():
        results = run_checkers([_unknown_tails(flights), _unknown_tails(flights, name="again")])
        return [(r.keys_distinct, len(r.failing_keys())) for r in results]

    found, jobs = count_jobs(spark, evaluate)
    assert found == [((721, True), 100)] * 2
    assert jobs == 1  # counts, sample, listed keys and distinct counts: one pass


class UnknownTails(QualityCheck, register=False):
    name = "unknown_tails"
    description = "Every flight's plane is known."
    parser = CallableParser(lambda spark: spark.range(0), name="flights (given by the test)")

    def checker(self, flights):
        return _unknown_tails(flights)


def test_the_outcome_carries_the_count_and_older_json_still_loads(spark, flights):
    outcome = evaluate_check(UnknownTails, spark=spark, now=NOW, data=flights)
    assert outcome.status is Status.FAILED
    assert (outcome.failing_keys_distinct, outcome.failing_keys_approximate) == (721, False)
    assert len(outcome.failing_keys) == 100
    again = CheckOutcome.from_json(outcome.to_json())
    assert (again.failing_keys_distinct, again.failing_keys_approximate) == (721, False)
    older = outcome.to_dict()
    del older["failing_keys_distinct"], older["failing_keys_approximate"]
    loaded = CheckOutcome.from_dict(older)  # written before the count existed
    assert (loaded.failing_keys_distinct, loaded.failing_keys_approximate) == (None, False)


def _write_day(spark, root, day: int) -> None:
    """Day `day`'s 4,000 flights of tail numbers N0 .. N(200 * day + 199), all unknown: the days
    share most of their tail numbers."""
    spark.range(0, 4000, numPartitions=2).select(
        F.col("id"),
        F.concat(F.lit("N"), (F.col("id") % (200 * day + 200)).cast("string")).alias("tailnum"),
        F.lit(False).alias("tail_known"),
    ).write.mode("overwrite").parquet(str(root / f"day={day}"))


def test_incremental_counts_merge_over_partitions_like_a_full_read(spark, tmp_path):

    from checkers.parsers import HivePartitions, ParquetParser
    from checks.incremental import Incremental
    from scheduling.tick.evaluate import evaluate_checks
    from tests.incremental_helpers import partition_store

    store = partition_store(tmp_path)
    root = tmp_path / "lake"

    class LakeTails(QualityCheck, register=False):
        name = "lake_tails"
        parser = ParquetParser(str(root), partitioning=HivePartitions(("day",)))
        incremental = Incremental()
        tolerance = KnownBroken(["N1", "N2"])

        def checker(self, flights):
            return _unknown_tails(flights)

    for day in (1, 2, 3):
        _write_day(spark, root, day)
        [mine] = evaluate_checks([LakeTails], spark=spark, now=NOW, partitions=store)
        [full] = evaluate_checks([LakeTails], spark=spark, now=NOW, full=True)
        assert mine.reading["partitions_read"] == 1  # the new day only, the others from states
        assert mine.failing_keys_distinct == full.failing_keys_distinct == 200 * day + 198
        assert mine.failing_keys == full.failing_keys and len(mine.failing_keys) == 100
    assert not mine.failing_keys_approximate  # the union of the days' tail numbers, not a sum
