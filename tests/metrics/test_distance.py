"""Distribution drift from stored states: KS between KLL sketches flags a planted shift in one
day's arr_delay against the previous 30 days and not an unshifted day, with no Spark job beyond
the days' own pass; PSI and chi-square on category counts against known values."""

from __future__ import annotations

import numpy as np
import pytest
from pyspark.sql import functions as F

from checkers.metrics import ApproxQuantile
from checkers.metrics.distance import (
    chi_square,
    population_stability_index,
    stored_ks,
)
from checkers.metrics.partitioned import analyze_partitions
from checkers.metrics.state_stores import InMemoryStateStore
from tests.metrics.jobs import count_jobs

DAYS = [f"2013-01-{d:02d}" for d in range(1, 33)]  # 32 days: the last one is shifted


@pytest.fixture(scope="module")
def stored_days(spark):
    """300 normal delays a day (mean 5, sd 20) drawn in Spark from a fixed seed, the last day's
    shifted by 25: no rows travel from Python."""
    per_day = 300
    day = F.element_at(F.array(*map(F.lit, DAYS)), (F.col("id") % len(DAYS) + 1).cast("int"))
    shift = F.when(day == DAYS[-1], 25.0).otherwise(0.0)
    df = spark.range(
        0, per_day * len(DAYS), 1, 1
    ).select(  # one slice: the seeded draw is reproducible
        day.alias("day"), (F.randn(7) * 20.0 + 5.0 + shift).alias("arr_delay")
    )
    median = ApproxQuantile("arr_delay", 0.5)
    found = analyze_partitions(df, [median], DAYS, column="day")
    store = InMemoryStateStore()
    for key, states in found.states.items():
        store.save("flights", key, states)
    return store, median


@pytest.mark.classic_only  # counts jobs
def test_ks_flags_the_shifted_day_and_not_an_unshifted_one_without_a_job(spark, stored_days):
    store, median = stored_days

    def distances():
        shifted = stored_ks(
            store, median, dataset="flights", partition=DAYS[-1], reference=DAYS[-31:-1]
        )
        steady = stored_ks(
            store, median, dataset="flights", partition=DAYS[-2], reference=DAYS[-32:-2]
        )
        return shifted, steady

    (shifted, steady), jobs = count_jobs(spark, distances)
    assert jobs == 0
    assert (shifted.n, shifted.m) == (300, 9000)
    assert shifted.robust() > 0.2  # a shift of 1.25 standard deviations: D about 0.45
    assert steady.robust() == 0.0  # sampling noise alone stays under the correction
    assert steady.distance < 0.1


def test_a_missing_state_is_an_error_not_a_zero_distance(stored_days):
    store, median = stored_days
    with pytest.raises(KeyError, match="no stored KLL state"):
        stored_ks(store, median, dataset="flights", partition="2013-02-30", reference=DAYS[:3])
    with pytest.raises(KeyError):
        stored_ks(
            store,
            ApproxQuantile("other", 0.5),
            dataset="flights",
            partition=DAYS[0],
            reference=DAYS[1:2],
        )


def test_psi_and_chi_square_on_category_counts():
    assert population_stability_index({"a": 50, "b": 50}, {"a": 50, "b": 50}) == 0.0
    # shares 0.7/0.3 vs 0.5/0.5: 0.2*ln(1.4) + (-0.2)*ln(0.6)
    expected = 0.2 * np.log(1.4) - 0.2 * np.log(0.6)
    assert population_stability_index({"a": 70, "b": 30}, {"a": 5, "b": 5}) == pytest.approx(
        expected
    )
    assert np.isfinite(population_stability_index({"a": 10, "c": 5}, {"a": 10, "b": 5}))
    same = chi_square({"x": 100, "y": 100, "z": 100}, {"x": 1, "y": 1, "z": 1})
    assert (same.statistic, same.degrees_of_freedom, same.p_value) == (0.0, 2, 1.0)
    moved = chi_square({"x": 130, "y": 100, "z": 70}, {"x": 1, "y": 1, "z": 1})
    assert moved.statistic == pytest.approx(18.0)  # (30² + 0 + 30²) / 100
    assert moved.p_value == pytest.approx(np.exp(-9.0), rel=1e-9)  # chi2(2) tail: exp(-x/2)
