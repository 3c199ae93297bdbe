"""ApproxCountDistinct (HLL) and ApproxQuantile(s) (KLL) against exact answers."""

from __future__ import annotations

import pytest

from checkers.metrics import (
    ApproxCountDistinct,
    ApproxQuantile,
    ApproxQuantiles,
    HllState,
    InterquartileRange,
    KllState,
    Size,
    run_analysis,
)
from tests.metrics.jobs import count_jobs


@pytest.fixture(scope="module")
def numbers(spark):
    # 1..2000 with every 10th value NULL, plus a date column and a label
    return spark.range(1, 2001).selectExpr(
        "CASE WHEN id % 10 = 0 THEN NULL ELSE id END AS v",
        "date_add(DATE'2024-01-01', CAST(id % 50 AS INT)) AS day",
        "CASE WHEN id <= 1000 THEN 'low' ELSE 'high' END AS half",
    )


@pytest.mark.connect
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
    assert all(float(result.metric(a).value).is_integer() for a in analyzers)


@pytest.mark.connect
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
    # rounded to a whole number as Deequ does, not the sketch's 5.000000049670538
    assert result.metric(ApproxCountDistinct("x")).value == 5.0


@pytest.mark.connect
def test_empty_and_all_null_inputs(make_df) -> None:
    df = make_df([(None,), (None,)], "x double")
    result = run_analysis(df, [ApproxQuantile("x", 0.5), ApproxCountDistinct("x")])
    assert "NULL" in result.metric(ApproxQuantile("x", 0.5)).error
    assert (
        result.metric(ApproxCountDistinct("x")).value == 0.0
    )  # no distinct values: zero, as Deequ
    empty = make_df([], "x double")
    assert not run_analysis(empty, [ApproxQuantile("x", 0.5)]).metric(ApproxQuantile("x", 0.5)).ok


@pytest.mark.connect
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


@pytest.mark.connect
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


# Deequ's rank rule (Spark's GK digest): the ceil(q*n)-th smallest value, the smallest at q = 0.
RANKS = [
    (6, 0.5, 3.0),  # ceil(3.0) = 3
    (6, 0.25, 2.0),  # ceil(1.5) = 2
    (6, 0.75, 5.0),  # ceil(4.5) = 5
    (6, 0.0, 1.0),
    (6, 1.0, 6.0),
    (5, 0.6, 3.0),  # 0.6 * 5 is 3.0000000000000004 in floating point: still the 3rd
    (5, 0.1, 1.0),  # ceil(0.5) = 1
    (4, 0.5, 2.0),  # an even count takes the lower middle value
    (10, 0.3, 3.0),
    (10, 0.91, 10.0),  # ceil(9.1) = 10
]


@pytest.mark.parametrize(("n", "q", "expected"), RANKS)
def test_small_data_follows_deequs_rank_rule(make_df, n, q, expected) -> None:
    df = make_df([(float(i),) for i in range(1, n + 1)] + [(None,)], "x double")
    single, several = ApproxQuantile("x", q), ApproxQuantiles("x", (q, 0.5))
    result = run_analysis(df, [single, several])
    assert result.metric(single).value == expected
    assert result.metric(several).value[str(float(q))] == expected


def test_rank_rule_counts_repeated_values(make_df) -> None:
    # sorted: 1 1 1 2 5 5 -> 0.5: 3rd = 1; 0.6: ceil(3.6) = 4th = 2; 0.7: ceil(4.2) = 5th = 5
    df = make_df([(5,), (1,), (2,), (1,), (5,), (1,)], "x int")
    analyzer = ApproxQuantiles("x", (0.5, 0.6, 0.7))
    assert run_analysis(df, [analyzer]).metric(analyzer).value == {
        "0.5": 1.0,
        "0.6": 2.0,
        "0.7": 5.0,
    }


def test_interquartile_range_interpolates_like_deequ_on_small_data(make_df) -> None:
    # 1..6: Q1 at position 1.25 -> 2.25, Q3 at 3.75 -> 4.75 (Spark's percentile), IQR 2.5
    df = make_df([(float(i), i % 2) for i in range(1, 7)] + [(None, 0)], "x double, odd int")
    analyzers = [
        InterquartileRange("x"),
        InterquartileRange("x", where="odd = 1"),  # 1, 3, 5: Q1 2.0, Q3 4.0
        InterquartileRange("x", where="x = 4"),  # one value: 0
    ]
    result = run_analysis(df, analyzers)
    assert [result.metric(a).value for a in analyzers] == [2.5, 2.0, 0.0]
    assert result.metric(analyzers[0]).name == "InterquartileRange"


def test_interquartile_range_on_empty_missing_and_wrong_input(make_df) -> None:
    df = make_df([(None, "a"), (None, "b")], "x double, s string")
    result = run_analysis(
        df, [InterquartileRange("x"), InterquartileRange("s"), InterquartileRange("nope"), Size()]
    )
    assert "Empty state" in result.metric(InterquartileRange("x")).error
    assert "numeric column" in result.metric(InterquartileRange("s")).error
    assert "does not exist" in result.metric(InterquartileRange("nope")).error
    assert result.metric(Size()).value == 2.0


def test_interquartile_range_is_close_on_large_data_and_merges(numbers) -> None:
    iqr = InterquartileRange("v")
    low = run_analysis(numbers.where("half = 'low'"), [iqr])
    high = run_analysis(numbers.where("half = 'high'"), [iqr])
    merged = iqr.compute_value(low.states[iqr].merge(high.states[iqr]))
    # values 1..2000 without multiples of 10: quartiles near 500 and 1500
    assert merged == pytest.approx(1000, abs=70)
    assert run_analysis(numbers, [iqr]).metric(iqr).value == pytest.approx(1000, abs=70)


@pytest.mark.classic_only
def test_quantile_sketches_share_the_scan(spark, numbers) -> None:
    analyzers = [
        Size(),
        InterquartileRange("v"),
        ApproxQuantile("v", 0.5),
        InterquartileRange("v", where="half = 'low'"),
    ]
    result, jobs = count_jobs(spark, lambda: run_analysis(numbers, analyzers))
    assert jobs == result.spark_actions == 1
    assert all(m.ok for m in result)
