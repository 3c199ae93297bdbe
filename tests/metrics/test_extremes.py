"""Minimum, Maximum, MinLength and MaxLength on hand-computed data."""

from __future__ import annotations

import math

import pytest

from checkers.metrics import (
    Maximum,
    MaxLength,
    Minimum,
    MinLength,
    NullBehavior,
    Size,
    run_analysis,
)

SCHEMA = "n double, s string, k int"
ROWS = [(3.5, "abc", 1), (-1.0, None, 1), (None, "a", 2), (10.0, "abcdef", 2)]


@pytest.fixture(scope="module")
def data(spark):
    return spark.createDataFrame(ROWS, SCHEMA)


def test_min_and_max_skip_nulls_and_respect_where(data) -> None:
    analyzers = [Minimum("n"), Maximum("n"), Minimum("n", where="k = 2"), Maximum("k")]
    result = run_analysis(data, analyzers)
    assert [result.metric(a).value for a in analyzers] == [-1.0, 10.0, 10.0, 2.0]


def test_min_of_only_nulls_is_an_error(data, make_df) -> None:
    analyzer = Minimum("n", where="s = 'a'")
    assert "NULL" in run_analysis(data, [analyzer]).metric(analyzer).error
    empty = make_df([], SCHEMA)
    assert not run_analysis(empty, [Maximum("n")]).metric(Maximum("n")).ok


def test_lengths_with_each_null_behavior(data) -> None:
    analyzers = [
        MinLength("s"),
        MaxLength("s"),
        MinLength("s", null_behavior=NullBehavior.EMPTY_STRING),
        MinLength("s", null_behavior=NullBehavior.FAIL),
        MaxLength("s", null_behavior=NullBehavior.FAIL),
        MaxLength("s", where="k = 1"),
    ]
    result = run_analysis(data, analyzers)
    values = [result.metric(a).value for a in analyzers]
    assert values[:3] == [1.0, 6.0, 0.0]
    assert values[3] == -math.inf and values[4] == math.inf
    assert values[5] == 3.0


def test_type_checks(data) -> None:
    result = run_analysis(data, [Minimum("s"), MaxLength("n"), Size()])
    assert "numeric column" in result.metric(Minimum("s")).error
    assert "string column" in result.metric(MaxLength("n")).error
    assert result.metric(Size()).value == 4.0


def test_missing_column(data) -> None:
    result = run_analysis(data, [MinLength("nope"), MinLength("s")])
    assert "does not exist" in result.metric(MinLength("nope")).error
    assert result.metric(MinLength("s")).value == 1.0
