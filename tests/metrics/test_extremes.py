"""Minimum, Maximum, MinLength and MaxLength on hand-computed data."""

from __future__ import annotations

import math

import pytest

from checkers.metrics import (
    Check,
    CheckLevel,
    ConstraintStatus,
    Maximum,
    MaxLength,
    Minimum,
    MinLength,
    NullBehavior,
    Size,
    VerificationSuite,
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


def test_lengths_with_a_where_that_filters_rows_out(data) -> None:
    """As Deequ: NULL behaviour applies to the rows the filter keeps; rows it drops are skipped
    whatever they hold, and a filter that keeps nothing leaves an empty state."""
    # k = 2 keeps (NULL n, "a") and (10.0, "abcdef"); k = 1 keeps "abc" and a NULL
    analyzers = [
        MinLength("s", where="k = 2"),
        MaxLength("s", where="k = 2"),
        MinLength("s", where="k = 1"),  # NULL ignored: 3
        MinLength("s", where="k = 1", null_behavior=NullBehavior.EMPTY_STRING),  # NULL -> 0
        MinLength("s", where="k = 2", null_behavior=NullBehavior.EMPTY_STRING),  # no NULL kept
        MaxLength("s", where="k = 2", null_behavior=NullBehavior.FAIL),  # no NULL kept: 6
        MinLength("s", where="k = 1", null_behavior=NullBehavior.FAIL),  # NULL kept: -inf
        MinLength("s", where="n IS NULL"),  # only "a" (n NULL): 1
    ]
    result = run_analysis(data, analyzers)
    values = [result.metric(a).value for a in analyzers]
    assert values == [1.0, 6.0, 3.0, 0.0, 1.0, 6.0, -math.inf, 1.0]
    for behavior in NullBehavior:
        nothing = MinLength("s", where="k > 5", null_behavior=behavior)
        metric = run_analysis(data, [nothing]).metric(nothing)
        assert "Empty state" in metric.error, behavior
    only_null = MaxLength("s", where="s IS NULL")
    assert "Empty state" in run_analysis(data, [only_null]).metric(only_null).error


def test_length_constraints_follow_null_behavior_and_where(data) -> None:
    check = (
        Check(CheckLevel.ERROR, "lengths")
        .has_min_length("s", lambda v: v >= 1)  # NULL ignored: min 1
        .has_min_length("s", lambda v: v >= 1, null_behavior=NullBehavior.EMPTY_STRING)
        .has_max_length("s", lambda v: v <= 6, null_behavior=NullBehavior.FAIL)
        .has_max_length("s", lambda v: v <= 6, null_behavior=NullBehavior.FAIL)
        .where("k = 2")  # the NULL row is filtered out: 6
    )
    suite = VerificationSuite(data).add_check(check)
    (result,) = suite.run().check_results
    statuses = [c.status for c in result.constraint_results]
    assert statuses == [
        ConstraintStatus.SUCCESS,
        ConstraintStatus.FAILURE,  # 0 for the NULL
        ConstraintStatus.FAILURE,  # +inf for the NULL
        ConstraintStatus.SUCCESS,
    ]


def test_length_row_results_follow_null_behavior(data) -> None:
    checks = [
        Check(CheckLevel.ERROR, behavior.value).has_min_length(
            "s", lambda v: v >= 1, null_behavior=behavior
        )
        for behavior in NullBehavior
    ]
    report = VerificationSuite(data).add_checks(checks).run()
    rows = report.row_level_results(data).where("s IS NULL").collect()
    # the NULL row: not judged (IGNORE), judged as length 0 (EMPTY_STRING), failing (FAIL)
    assert [rows[0][b.value] for b in NullBehavior] == [True, False, False]
