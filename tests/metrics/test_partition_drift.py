"""`has_no_drift` in an incremental check: a planted shift in one day's arr_delay is flagged by
KS against the previous 30 days and an unshifted day is not, from the states stored per day,
with no Spark job beyond the day's own pass (a twin check sketching the same column, without
the constraint, takes as many);
outside an incremental check the constraint is an error, not a pass."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pandas as pd
import pytest

from checkers import MetricChecker, Status
from checkers.metrics import Check, CheckLevel, KsDrift
from checkers.parsers import HivePartitions, ParquetParser
from checks import QualityCheck
from checks.incremental import Incremental
from scheduling.tick.evaluate import evaluate_checks
from tests.incremental_helpers import partition_store, write_day
from tests.metrics.jobs import count_jobs

pytestmark = pytest.mark.classic_only  # jobs are counted through the SparkContext

START = dt.date(2013, 1, 1)
NOW = dt.datetime(2013, 3, 1, tzinfo=dt.UTC)
PER_DAY = 200


def delays(day: int, shift: float = 0.0) -> pd.DataFrame:
    draw = np.random.default_rng(day).normal(5.0, 20.0, PER_DAY) + shift
    return pd.DataFrame({"flight": np.arange(PER_DAY), "arr_delay": draw})


def _check(root, name: str, *, drift: bool) -> type[QualityCheck]:
    source = ParquetParser(str(root), partitioning=HivePartitions(("day",)))

    class Delays(QualityCheck, register=False):
        parser = source
        incremental = Incremental()

        def checker(self, flights):
            check = Check(CheckLevel.ERROR, "delays").has_size(lambda n: n > 0)
            if drift:
                check = check.has_no_drift("arr_delay", ks_max=0.05, window=30)
            else:  # the same pass over the day: counts, and a KLL sketch of arr_delay
                check = check.has_approx_quantile("arr_delay", 0.5, lambda v: v < 60)
            return MetricChecker(flights, [check])

    Delays.name = name
    return Delays


def _run(spark, check, store):
    (outcome,), jobs = count_jobs(
        spark, lambda: evaluate_checks([check], spark=spark, now=NOW, partitions=store)
    )
    assert outcome.error is None, outcome.error
    return outcome, jobs


def test_a_shifted_day_is_flagged_and_an_unshifted_one_is_not_without_an_extra_job(spark, tmp_path):
    for day in range(30):
        write_day(tmp_path / "lake", START + dt.timedelta(days=day), delays(day))
    store = partition_store(tmp_path)
    drift = _check(tmp_path / "lake", "delay_drift", drift=True)
    twin = _check(tmp_path / "lake", "delay_sizes", drift=False)
    for check in (drift, twin):
        _run(spark, check, store)

    write_day(tmp_path / "lake", START + dt.timedelta(days=30), delays(30))
    steady, jobs = _run(spark, drift, store)
    _, twin_jobs = _run(spark, twin, store)
    assert steady.reading["partitions_read"] == 1 and steady.status is Status.PASSED
    assert jobs == twin_jobs

    write_day(tmp_path / "lake", START + dt.timedelta(days=31), delays(31, shift=25.0))
    shifted, jobs = _run(spark, drift, store)
    _, twin_jobs = _run(spark, twin, store)
    assert shifted.reading["partitions_read"] == 1 and jobs == twin_jobs
    assert shifted.status is Status.FAILED and shifted.failing == 1
    (label,) = [k for k in shifted.metrics if k.startswith("NoDriftConstraint")]
    assert shifted.metrics[label] > 0.2  # a shift of 1.25 standard deviations: D about 0.45
    assert steady.metrics[label] == 0.0  # sampling noise stays under the correction


def test_outside_an_incremental_check_the_drift_constraint_is_an_error(make_df):
    df = make_df([(float(x),) for x in range(10)], "arr_delay double")
    check = Check(CheckLevel.ERROR, "delays").has_no_drift("arr_delay", ks_max=0.1)
    result = MetricChecker(df, [check]).run()
    assert result.failing == 1
    (failure,) = result.fetch_sample(10)  # type: ignore[misc]
    assert "needs an incremental check" in failure["reason"]
    with pytest.raises(ValueError, match="window"):
        KsDrift("arr_delay", window=0)
