"""Skewness and Kurtosis on hand-computed data, their state's exact merge, and their place in the
shared scan."""

from __future__ import annotations

import math
import random
from dataclasses import astuple

import pytest

from checkers.metrics import (
    HigherMomentsState,
    Kurtosis,
    Mean,
    Size,
    Skewness,
    Sum,
    Variance,
    run_analysis,
)
from checkers.metrics._serde import decode_state, encode_state
from tests.metrics.jobs import count_jobs

SCHEMA = "x int, c double, label string"
# x: 1, 2, 3, 4, 10 and a NULL; c is constant where set
ROWS = [
    (1, 5.0, "a"),
    (2, 5.0, "a"),
    (3, None, "a"),
    (4, 5.0, "b"),
    (10, 5.0, "b"),
    (None, 5.0, "b"),
]
# by hand for 1, 2, 3, 4, 10: mean 4, deviations -3, -2, -1, 0, 6
# m2 = 9+4+1+0+36 = 50, m3 = -27-8-1+0+216 = 180, m4 = 81+16+1+0+1296 = 1394
SKEWNESS = math.sqrt(5) * 180 / 50**1.5  # 1.13842...
KURTOSIS = 5 * 1394 / 50**2 - 3  # -0.212


@pytest.fixture(scope="module")
def data(spark):
    return spark.createDataFrame(ROWS, SCHEMA)


def moments(values: list[float]) -> HigherMomentsState:
    """The state straight from its definition (two passes, exact enough for small data)."""
    if not values:
        return HigherMomentsState.zero()
    n = len(values)
    avg = sum(values) / n
    return HigherMomentsState(n, avg, *(sum((v - avg) ** p for v in values) for p in (2, 3, 4)))


def test_skewness_and_kurtosis_skip_nulls(data) -> None:
    result = run_analysis(data, [Skewness("x"), Kurtosis("x")])
    assert result.metric(Skewness("x")).value == pytest.approx(SKEWNESS)
    assert result.metric(Kurtosis("x")).value == pytest.approx(KURTOSIS)
    assert astuple(result.states[Skewness("x")]) == pytest.approx((5, 4.0, 50.0, 180.0, 1394.0))


def test_where_filters_the_values(data) -> None:
    analyzers = [Skewness("x", where="label = 'a'"), Kurtosis("x", where="label = 'a'")]
    result = run_analysis(data, analyzers)
    # 1, 2, 3: symmetric, m2 = 2, m4 = 2 -> skewness 0, excess kurtosis 3 * 2 / 4 - 3 = -1.5
    assert result.metric(analyzers[0]).value == pytest.approx(0.0, abs=1e-12)
    assert result.metric(analyzers[1]).value == pytest.approx(-1.5)


def test_equal_values_give_zero_as_in_deequ(data) -> None:
    result = run_analysis(data, [Skewness("c"), Kurtosis("c"), Kurtosis("x", where="x = 4")])
    assert result.metric(Skewness("c")).value == 0.0
    assert result.metric(Kurtosis("c")).value == 0.0
    assert result.metric(Kurtosis("x", where="x = 4")).value == 0.0


def test_only_nulls_and_empty_input_are_empty_states(spark, data) -> None:
    empty = spark.createDataFrame([], SCHEMA)
    for frame, analyzer in [
        (data, Skewness("c", where="x = 3")),
        (data, Kurtosis("c", where="x = 3")),
        (empty, Skewness("x")),
        (empty, Kurtosis("x")),
    ]:
        metric = run_analysis(frame, [analyzer]).metric(analyzer)
        assert metric.empty and "all input values were NULL" in metric.error


@pytest.mark.parametrize("analyzer", [Skewness("label"), Kurtosis("label")])
def test_strings_are_rejected_and_others_still_run(data, analyzer) -> None:
    result = run_analysis(data, [analyzer, Size()])
    assert "has type string" in result.metric(analyzer).error
    assert result.metric(Size()).value == 6.0


def test_missing_column_is_reported_and_others_still_run(data) -> None:
    result = run_analysis(data, [Skewness("nope"), Kurtosis("nope"), Kurtosis("x")])
    assert "column 'nope' does not exist" in result.metric(Skewness("nope")).error
    assert "column 'nope' does not exist" in result.metric(Kurtosis("nope")).error
    assert result.metric(Kurtosis("x")).value == pytest.approx(KURTOSIS)


def test_merge_equals_the_state_of_the_union() -> None:
    rng = random.Random(16)
    values = [rng.uniform(-50, 200) for _ in range(40)] + [1e3, -3e2]
    for cut in (0, 1, 2, 17, 41, 42):
        a, b = values[:cut], values[cut:]
        merged, whole = moments(a).merge(moments(b)), moments(values)
        assert astuple(merged) == pytest.approx(astuple(whole), rel=1e-9)
        assert astuple(moments(b).merge(moments(a))) == pytest.approx(astuple(whole), rel=1e-9)


def test_state_is_stored_and_read_back() -> None:
    state = moments([1, 2, 3, 4, 10])
    assert decode_state(encode_state(state)) == state


@pytest.mark.classic_only
def test_moments_join_the_shared_scan(spark, data) -> None:
    base = [Sum("x"), Mean("x")]
    more = [
        *base,
        Variance("x"),
        Variance("x", sample=True),
        Skewness("x"),
        Kurtosis("x"),
        Kurtosis("x", where="label = 'b'"),
    ]
    alone, jobs_alone = count_jobs(spark, lambda: run_analysis(data, base))
    together, jobs_together = count_jobs(spark, lambda: run_analysis(data, more))
    assert jobs_together == jobs_alone == together.spark_actions == alone.spark_actions == 1
    assert together.metric(Skewness("x")).value == pytest.approx(SKEWNESS)
