"""Histogram with numeric bins: hand-computed counts, bin edges, NULLs, `where`, bad input, and
the shared grouping query."""

from __future__ import annotations

import pytest

from checkers.metrics import (
    Check,
    CheckLevel,
    ConstraintStatus,
    CountDistinct,
    Histogram,
    Size,
    VerificationSuite,
    run_analysis,
)
from tests.metrics.jobs import count_jobs

SCHEMA = "x double, n int, s string"
# x: -1, 0, 0.5, 1, 2, 2, 3, NaN, NULL
ROWS = [
    (-1.0, 1, "a"),
    (0.0, 1, "a"),
    (0.5, 2, "b"),
    (1.0, 2, "b"),
    (2.0, 3, "c"),
    (2.0, 3, "c"),
    (3.0, 4, "d"),
    (float("nan"), 4, "d"),
    (None, None, None),
]


@pytest.fixture(scope="module")
def data(spark):
    return spark.createDataFrame(ROWS, SCHEMA)


def counts(value: dict) -> dict[str, int]:
    return {label: entry["absolute"] for label, entry in value["values"].items()}


def test_bins_are_half_open_except_the_last(data) -> None:
    analyzer = Histogram("x", bins=[0, 1, 2, 3])
    value = run_analysis(data, [analyzer]).metric(analyzer).value
    assert value["number_of_bins"] == 3
    # [0,1): 0, 0.5; [1,2): 1; [2,3]: 2, 2, 3; -1 and NaN are out of range; NULL is NullValue
    assert counts(value) == {
        "[0.0, 1.0)": 2,
        "[1.0, 2.0)": 1,
        "[2.0, 3.0]": 3,
        "OutOfRange": 2,
        "NullValue": 1,
    }
    assert list(value["values"])[:3] == ["[0.0, 1.0)", "[1.0, 2.0)", "[2.0, 3.0]"]
    assert value["values"]["[2.0, 3.0]"]["ratio"] == pytest.approx(3 / 9)


def test_empty_bins_are_listed_and_where_filters_first(data) -> None:
    wide = Histogram("n", bins=(0, 10, 20, 30))
    filtered = Histogram("x", where="s = 'c'", bins=(-5, 5))
    result = run_analysis(data, [wide, filtered])
    assert counts(result.metric(wide).value) == {
        "[0.0, 10.0)": 8,
        "[10.0, 20.0)": 0,
        "[20.0, 30.0]": 0,
        "NullValue": 1,
    }
    only = result.metric(filtered).value
    assert counts(only) == {"[-5.0, 5.0]": 2}
    assert only["values"]["[-5.0, 5.0]"]["ratio"] == 1.0  # over the filtered rows


def test_many_bins_find_each_value(spark) -> None:
    df = spark.range(1000).selectExpr("id * 0.1 AS v")  # decimals 0.0 .. 99.9, ten per bin
    analyzer = Histogram("v", bins=range(101))  # 100 bins of width 1: a tree of comparisons
    value = run_analysis(df, [analyzer]).metric(analyzer).value
    last = "[99.0, 100.0]"
    want = {f"[{float(i)}, {float(i + 1)})": 10 for i in range(99)} | {last: 10}
    assert counts(value) == want


def test_bad_bins_wrong_type_missing_column_and_empty_input(data, make_df) -> None:
    with pytest.raises(ValueError, match=r"2\.\.1001 edges"):
        Histogram("x", bins=[1.0])
    with pytest.raises(ValueError, match="strictly increasing"):
        Histogram("x", bins=[0, 2, 1])
    result = run_analysis(
        data, [Histogram("s", bins=(0, 1)), Histogram("nope", bins=(0, 1)), Size()]
    )
    assert "bins need a numeric column" in result.metric(Histogram("s", bins=(0, 1))).error
    assert "does not exist" in result.metric(Histogram("nope", bins=(0, 1))).error
    assert result.metric(Size()).value == 9.0
    empty = make_df([], SCHEMA)
    metric = run_analysis(empty, [Histogram("x", bins=(0, 1))]).metric(Histogram("x", bins=(0, 1)))
    assert "Empty state" in metric.error


@pytest.mark.classic_only
def test_binned_and_plain_histograms_share_one_grouping_query(spark, data) -> None:
    analyzers = [
        Size(),
        Histogram("x", bins=(0, 1, 2, 3)),
        Histogram("n", bins=(0, 2, 4)),
        Histogram("x", bins=(0, 3), where="n > 1"),
        Histogram("s"),
        CountDistinct("n"),
    ]
    result, jobs = count_jobs(spark, lambda: run_analysis(data, analyzers))
    assert jobs == result.spark_actions == 2  # the shared scan, the one grouping query
    assert counts(result.metric(analyzers[2]).value) == {
        "[0.0, 2.0)": 2,
        "[2.0, 4.0]": 6,
        "NullValue": 1,
    }
    assert result.metric(CountDistinct("n")).value == 4.0


def test_check_has_histogram_values_with_bins(data) -> None:
    check = Check(CheckLevel.ERROR, "bins").has_histogram_values(
        "x", lambda v: v["[2.0, 3.0]"]["absolute"] == 3, bins=[0, 1, 2, 3]
    )
    (result,) = VerificationSuite(data).add_check(check).run().check_results
    assert [c.status for c in result.constraint_results] == [ConstraintStatus.SUCCESS]
