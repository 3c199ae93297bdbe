"""Column profiles carry what Deequ's column profiles carry, on hand-computed data: the numeric
statistics of its `NumericColumnProfile`, and string lengths over the non-NULL values."""

from __future__ import annotations

import math

import pytest

from checkers.metrics.profiles import PERCENTILES, profile


@pytest.fixture(scope="module")
def profiles(spark):
    rows = [
        (0, "a"),
        (0, "abc"),
        (1, None),
        (2, "ab"),
        (3, "abcd"),
        (6, "a"),
        (None, "ab"),
    ]
    data = spark.createDataFrame(rows, "x int, s string").selectExpr(
        "x", "s", "CAST(NULL AS double) AS empty"
    )
    return profile(data)


def test_numeric_profile_has_deequs_statistics(profiles):
    x = profiles.columns["x"]  # 0, 0, 1, 2, 3, 6 and a NULL: mean 2, deviations -2 -2 -1 0 1 4
    assert (x.minimum, x.maximum, x.range, x.sum, x.mean) == (0.0, 6.0, 6.0, 12.0, 2.0)
    assert x.zeros_count == 2
    assert x.variance == pytest.approx(26 / 6)  # population: m2 / n
    assert x.stddev == pytest.approx(math.sqrt(26 / 6))
    assert x.skewness == pytest.approx((48 / 6) / (26 / 6) ** 1.5)  # m3 = 48
    assert x.kurtosis == pytest.approx(6 * 290 / 26**2 - 3)  # m4 = 290, excess
    # Q1 at position 1.25 of 0 0 1 2 3 6: 0.25; Q3 at 3.75: 2.75 (Spark's percentile)
    assert x.interquartile_range == pytest.approx(2.5)


def test_percentiles_and_quartiles_follow_the_approx_quantile_rank_rule(profiles):
    x = profiles.columns["x"]  # the ceil(q * 6)-th smallest of 0 0 1 2 3 6
    assert x.quantiles == {"0.25": 0.0, "0.5": 1.0, "0.75": 3.0}
    assert x.approx_percentiles is not None and len(x.approx_percentiles) == len(PERCENTILES) == 99
    percentile = dict(zip(range(1, 100), x.approx_percentiles, strict=True))
    assert (percentile[1], percentile[33], percentile[34], percentile[50]) == (0.0, 0.0, 1.0, 1.0)
    assert (percentile[83], percentile[84], percentile[99]) == (3.0, 6.0, 6.0)


def test_all_null_numeric_column_has_no_statistics(profiles):
    empty = profiles.columns["empty"]
    assert empty.completeness == 0.0 and empty.zeros_count == 0  # no value is zero
    for value in (
        empty.minimum,
        empty.range,
        empty.sum,
        empty.variance,
        empty.skewness,
        empty.kurtosis,
        empty.interquartile_range,
        empty.quantiles,
        empty.approx_percentiles,
    ):
        assert value is None


def test_string_profile_has_lengths_of_the_non_null_values(profiles):
    s = profiles.columns["s"]  # Deequ reads NULL as "" here, so its minimum length would be 0
    assert (s.min_length, s.max_length) == (1.0, 4.0)
    assert s.sum is None and s.variance is None and s.range is None
