"""Sum, Mean, StandardDeviation, Variance and Correlation on hand-computed data."""

from __future__ import annotations

import math
import statistics

import pytest

from checkers.metrics import (
    Correlation,
    Mean,
    Size,
    StandardDeviation,
    Sum,
    Variance,
    run_analysis,
)

SCHEMA = "x int, y double, label string"
ROWS = [(1, 2.0, "a"), (2, 4.0, "a"), (3, None, "b"), (None, 7.0, "b"), (4, 9.0, "b")]


@pytest.fixture(scope="module")
def data(spark):
    return spark.createDataFrame(ROWS, SCHEMA)


@pytest.fixture(scope="module")
def empty(spark):
    return spark.createDataFrame([], SCHEMA)


def test_sum_and_mean_skip_nulls(data) -> None:
    analyzers = [Sum("x"), Mean("x"), Sum("y", where="label = 'b'"), Mean("y", where="label = 'b'")]
    result = run_analysis(data, analyzers)
    assert result.metric(Sum("x")).value == 10.0
    assert result.metric(Mean("x")).value == 2.5
    assert result.metric(Sum("y", where="label = 'b'")).value == 16.0
    assert result.metric(Mean("y", where="label = 'b'")).value == 8.0


def test_sum_of_only_nulls_and_of_empty_input_are_errors(data, empty) -> None:
    only_nulls = run_analysis(data, [Sum("y", where="x = 3")]).metric(Sum("y", where="x = 3"))
    assert "all input values were NULL" in only_nulls.error
    for analyzer in (Sum("x"), Mean("x"), StandardDeviation("x"), Correlation("x", "y")):
        assert not run_analysis(empty, [analyzer]).metric(analyzer).ok


def test_population_standard_deviation(data) -> None:
    result = run_analysis(data, [StandardDeviation("x"), StandardDeviation("y", where="x < 3")])
    # x = 1,2,3,4: mean 2.5, squared deviations 2.25+0.25+0.25+2.25 = 5, population var 1.25
    assert result.metric(StandardDeviation("x")).value == pytest.approx(math.sqrt(1.25))
    # y where x<3: 2, 4 -> population stddev 1
    assert result.metric(StandardDeviation("y", where="x < 3")).value == pytest.approx(1.0)


def test_correlation_uses_rows_where_both_are_set(data) -> None:
    result = run_analysis(data, [Correlation("x", "y")])
    # pairs (1,2),(2,4),(4,9): hand-computed Pearson
    xs, ys = [1, 2, 4], [2.0, 4.0, 9.0]
    mx, my = sum(xs) / 3, sum(ys) / 3
    cov = sum((a - mx) * (b - my) for a, b in zip(xs, ys, strict=True))
    expected = cov / math.sqrt(sum((a - mx) ** 2 for a in xs) * sum((b - my) ** 2 for b in ys))
    assert result.metric(Correlation("x", "y")).value == pytest.approx(expected)
    assert result.metric(Correlation("x", "y")).instance == "x,y"


def test_correlation_of_a_constant_column_is_nan(make_df) -> None:
    df = make_df([(1, 5.0), (2, 5.0), (3, 5.0)], "a int, b double")
    value = run_analysis(df, [Correlation("a", "b")]).metric(Correlation("a", "b")).value
    assert math.isnan(value)


def test_correlation_with_where(data) -> None:
    analyzer = Correlation("x", "y", where="label = 'a'")
    assert run_analysis(data, [analyzer]).metric(analyzer).value == pytest.approx(1.0)


@pytest.mark.parametrize(
    "analyzer",
    [
        Sum("label"),
        Mean("label"),
        StandardDeviation("label"),
        Variance("label", sample=True),
        Correlation("x", "label"),
    ],
)
def test_numeric_analyzers_reject_strings_and_leave_others_running(data, analyzer) -> None:
    result = run_analysis(data, [analyzer, Size()])
    assert "has type string" in result.metric(analyzer).error
    assert result.metric(Size()).value == 5.0


def test_missing_column_is_reported(data) -> None:
    result = run_analysis(data, [Mean("nope"), Variance("nope"), Mean("x")])
    assert "column 'nope' does not exist" in result.metric(Mean("nope")).error
    assert "column 'nope' does not exist" in result.metric(Variance("nope")).error
    assert result.metric(Mean("x")).value == 2.5


def test_sum_of_large_longs_does_not_overflow(make_df) -> None:
    big = 2**62
    df = make_df([(big,), (big,), (big,)], "v bigint")
    assert run_analysis(df, [Sum("v")]).metric(Sum("v")).value == pytest.approx(3.0 * big)


def test_variance_population_by_default_and_sample_on_request(data) -> None:
    analyzers = [
        Variance("x"),
        Variance("x", sample=True),
        StandardDeviation("x", sample=True),
        Variance("y", where="x < 3"),
        Variance("y", where="x < 3", sample=True),
    ]
    result = run_analysis(data, analyzers)
    # x = 1,2,3,4 (NULL skipped): m2 = 5 -> population 5/4, sample 5/3 (statistics.variance)
    assert result.metric(Variance("x")).value == pytest.approx(statistics.pvariance([1, 2, 3, 4]))
    assert result.metric(Variance("x", sample=True)).value == pytest.approx(5 / 3)
    assert result.metric(StandardDeviation("x", sample=True)).value == pytest.approx(
        statistics.stdev([1, 2, 3, 4])
    )
    # y where x < 3: 2, 4 -> population 1, sample 2
    assert result.metric(Variance("y", where="x < 3")).value == pytest.approx(1.0)
    assert result.metric(Variance("y", where="x < 3", sample=True)).value == pytest.approx(2.0)


def test_sample_option_keeps_population_analyzers_as_they_were() -> None:
    """The default is Deequ's population estimate, and its key (repr) and name are unchanged."""
    assert StandardDeviation("x") == StandardDeviation("x", sample=False)
    assert hash(StandardDeviation("x")) == hash(StandardDeviation("x", sample=False))
    assert StandardDeviation("x") != StandardDeviation("x", sample=True)
    assert StandardDeviation("x") != Variance("x")
    assert (
        repr(StandardDeviation("x", where="y > 1"))
        == "StandardDeviation(column='x', where='y > 1')"
    )
    assert repr(Variance("x", sample=True)) == "Variance(column='x', sample=True)"
    assert StandardDeviation("x").metric_name == "StandardDeviation"
    assert StandardDeviation("x", sample=True).metric_name == "SampleStandardDeviation"
    assert Variance("x", sample=True).metric_name == "SampleVariance"


def test_sample_estimate_of_one_value_is_undefined(data) -> None:
    one = [
        Variance("x", where="x = 2", sample=True),
        StandardDeviation("x", where="x = 2", sample=True),
    ]
    result = run_analysis(data, [*one, Variance("x", where="x = 2")])
    for analyzer in one:
        metric = result.metric(analyzer)
        assert not metric.ok and not metric.empty
        assert "undefined for a single value" in metric.error
    assert result.metric(Variance("x", where="x = 2")).value == 0.0


def test_variance_of_only_nulls_and_of_empty_input_are_empty_states(data, empty) -> None:
    for frame, analyzer in [
        (data, Variance("y", where="x = 3")),
        (data, Variance("y", where="x = 3", sample=True)),
        (empty, Variance("x")),
        (empty, StandardDeviation("x", sample=True)),
    ]:
        metric = run_analysis(frame, [analyzer]).metric(analyzer)
        assert metric.empty and "all input values were NULL" in metric.error
