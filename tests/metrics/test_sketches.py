"""ApproxCountDistinct (HLL) and ApproxQuantile(s) (KLL) against exact answers."""

from __future__ import annotations

import pytest

from checkers.metrics import (
    ApproxCountDistinct,
    ApproxQuantile,
    ApproxQuantiles,
    HllState,
    KllState,
    Size,
    run_analysis,
)


@pytest.fixture(scope="module")
def numbers(spark):
    # 1..2000 with every 10th value NULL, plus a date column and a label
    return spark.range(1, 2001).selectExpr(
        "CASE WHEN id % 10 = 0 THEN NULL ELSE id END AS v",
        "date_add(DATE'2024-01-01', CAST(id % 50 AS INT)) AS day",
        "CASE WHEN id <= 1000 THEN 'low' ELSE 'high' END AS half",
    )


def test_approx_count_distinct_is_close_and_ignores_nulls(numbers) -> None:
    analyzers = [
        ApproxCountDistinct("v"),
        ApproxCountDistinct("day"),  # not a type the sketch takes directly: sketched as text
        ApproxCountDistinct("v", where="half = 'low'"),
    ]
    result = run_analysis(numbers, analyzers)
    assert result.metric(analyzers[0]).value == pytest.approx(1800, rel=0.05)
    assert result.metric(analyzers[1]).value == pytest.approx(50, rel=0.05)
    assert result.metric(analyzers[2]).value == pytest.approx(900, rel=0.05)


def test_approx_quantiles_within_rank_error(numbers) -> None:
    median = ApproxQuantile("v", 0.5)
    several = ApproxQuantiles("v", (0.1, 0.9))
    low_median = ApproxQuantile("v", 0.5, where="half = 'low'")
    result = run_analysis(numbers, [median, several, low_median])
    # rank error ~1.65% of 1,800 values ~ 30 positions ~ 33 in value
    assert result.metric(median).value == pytest.approx(1000, abs=60)
    assert result.metric(several).value["0.1"] == pytest.approx(200, abs=60)
    assert result.metric(several).value["0.9"] == pytest.approx(1800, abs=60)
    assert result.metric(low_median).value == pytest.approx(500, abs=40)
    assert median.metric_name == "ApproxQuantile-0.5"


def test_small_inputs_are_exact(make_df) -> None:
    df = make_df([(1.0,), (2.0,), (3.0,), (None,), (4.0,), (5.0,)], "x double")
    result = run_analysis(
        df, [ApproxQuantile("x", 0.0), ApproxQuantile("x", 1.0), ApproxCountDistinct("x")]
    )
    assert result.metric(ApproxQuantile("x", 0.0)).value == 1.0
    assert result.metric(ApproxQuantile("x", 1.0)).value == 5.0
    assert result.metric(ApproxCountDistinct("x")).value == pytest.approx(5, abs=0.01)


def test_empty_and_all_null_inputs(make_df) -> None:
    df = make_df([(None,), (None,)], "x double")
    result = run_analysis(df, [ApproxQuantile("x", 0.5), ApproxCountDistinct("x")])
    assert "NULL" in result.metric(ApproxQuantile("x", 0.5)).error
    assert (
        result.metric(ApproxCountDistinct("x")).value == 0.0
    )  # no distinct values: zero, as Deequ
    empty = make_df([], "x double")
    assert not run_analysis(empty, [ApproxQuantile("x", 0.5)]).metric(ApproxQuantile("x", 0.5)).ok


def test_wrong_type_and_missing_column(make_df) -> None:
    df = make_df([("a",)], "s string")
    result = run_analysis(df, [ApproxQuantile("s", 0.5), ApproxCountDistinct("nope"), Size()])
    assert "numeric column" in result.metric(ApproxQuantile("s", 0.5)).error
    assert "does not exist" in result.metric(ApproxCountDistinct("nope")).error
    assert result.metric(Size()).value == 1.0


def test_invalid_parameters_fail_at_definition() -> None:
    with pytest.raises(ValueError, match="within"):
        ApproxQuantile("x", 1.5)
    with pytest.raises(ValueError, match="at least one"):
        ApproxQuantiles("x", ())
    with pytest.raises(ValueError, match="lg_k"):
        ApproxCountDistinct("x", lg_k=30)


def test_sketch_states_merge_in_python(numbers) -> None:
    low = run_analysis(
        numbers.where("half = 'low'"), [ApproxCountDistinct("v"), ApproxQuantile("v", 0.5)]
    )
    high = run_analysis(
        numbers.where("half = 'high'"), [ApproxCountDistinct("v"), ApproxQuantile("v", 0.5)]
    )
    hll = low.states[ApproxCountDistinct("v")].merge(high.states[ApproxCountDistinct("v")])
    kll = low.states[ApproxQuantile("v", 0.5)].merge(high.states[ApproxQuantile("v", 0.5)])
    assert isinstance(hll, HllState) and isinstance(kll, KllState)
    assert ApproxCountDistinct("v").compute_value(hll) == pytest.approx(1800, rel=0.05)
    assert ApproxQuantile("v", 0.5).compute_value(kll) == pytest.approx(1000, abs=60)
