"""ZerosCount, RatioOfSums, DuplicateRowCount and the DataType ratio constraint on small
hand-computed data: NULLs, empty input, `where`, wrong types, missing columns, their Check
constraints, and their place in the shared passes (counted in Spark jobs)."""

from __future__ import annotations

import pytest

from checkers.metrics import (
    Check,
    CheckLevel,
    ConstraintStatus,
    DuplicateRowCount,
    RatioOfSums,
    Size,
    Uniqueness,
    VerificationSuite,
    ZerosCount,
    run_analysis,
)
from tests.metrics.jobs import count_jobs

SCHEMA = "id int, a double, b double, k string, m map<string,int>"
ROWS = [
    (1, 0.0, 2.0, "x", None),
    (2, 3.0, None, "y", None),
    (3, None, 4.0, "x", None),
    (4, -0.0, 0.0, "z", None),
    (5, 5.0, 2.0, "x", None),
    (6, 0.0, 1.0, None, None),
    (7, 2.0, None, "y", None),
    (8, None, None, None, None),
]


@pytest.fixture(scope="module")
def data(spark):
    return spark.createDataFrame(ROWS, SCHEMA)


@pytest.fixture(scope="module")
def empty(spark):
    return spark.createDataFrame([], SCHEMA)


def metrics(df, analyzers):
    result = run_analysis(df, analyzers)
    return [result.metric(a) for a in analyzers]


# -- ZerosCount ------------------------------------------------------------------------------
def test_zeros_count_counts_zero_and_negative_zero_but_not_null(data) -> None:
    a, b, ident, filtered = metrics(
        data, [ZerosCount("a"), ZerosCount("b"), ZerosCount("id"), ZerosCount("a", "id > 2")]
    )
    assert a.value == 3.0  # 0.0, -0.0, 0.0; the NULLs are not zero
    assert b.value == 1.0
    assert ident.value == 0.0
    assert filtered.value == 2.0  # rows 3..8: NULL, -0.0, 5.0, 0.0, 2.0, NULL
    assert a.entity.value == "Column" and a.instance == "a"


def test_zeros_count_is_zero_on_empty_input_and_when_where_keeps_nothing(data, empty) -> None:
    (on_empty,) = metrics(empty, [ZerosCount("a")])
    (nothing,) = metrics(data, [ZerosCount("a", "id > 100")])
    assert on_empty.value == 0.0 and nothing.value == 0.0


def test_zeros_count_nan_is_not_zero_and_decimals_are_numbers(spark) -> None:
    df = spark.createDataFrame([(float("nan"), 0), (0.0, 1)], "x double, d int").selectExpr(
        "x", "CAST(d AS DECIMAL(5, 2)) AS d"
    )
    x, d = metrics(df, [ZerosCount("x"), ZerosCount("d")])
    assert x.value == 1.0 and d.value == 1.0


def test_zeros_count_needs_a_numeric_existing_column(data) -> None:
    text, missing, size = metrics(data, [ZerosCount("k"), ZerosCount("nope"), Size()])
    assert "has type string" in text.error and "numeric" in text.error
    assert "column 'nope' does not exist" in missing.error
    assert size.value == 8.0


# -- RatioOfSums -----------------------------------------------------------------------------
def test_ratio_of_sums_skips_each_columns_nulls_on_its_own(data) -> None:
    whole, filtered = metrics(data, [RatioOfSums("a", "b"), RatioOfSums("a", "b", "id >= 3")])
    # a: 0 + 3 + (-0) + 5 + 0 + 2 = 10 (rows 3, 8 NULL); b: 2 + 4 + 0 + 2 + 1 = 9 (rows 2, 7, 8)
    assert whole.value == pytest.approx(10 / 9)
    assert filtered.value == pytest.approx((5 + 0 + 2) / (4 + 0 + 2 + 1))  # rows 3..8
    assert whole.entity.value == "Multicolumn" and whole.instance == "a,b"


def test_ratio_of_sums_zero_denominator_is_a_clear_error(data) -> None:
    (zero,) = metrics(data, [RatioOfSums("a", "b", "id = 4")])
    assert not zero.ok and not zero.empty
    assert "denominator sums to zero" in zero.error


def test_ratio_of_sums_without_values_is_an_empty_state(data, empty) -> None:
    only_null_numerator, nothing = metrics(
        data, [RatioOfSums("a", "b", "id = 3"), RatioOfSums("a", "b", "id > 100")]
    )
    (on_empty,) = metrics(empty, [RatioOfSums("a", "b")])
    for metric in (only_null_numerator, nothing, on_empty):
        assert metric.empty and "Empty state" in metric.error


def test_ratio_of_sums_needs_numeric_existing_columns(data) -> None:
    text, missing, working = metrics(
        data, [RatioOfSums("a", "k"), RatioOfSums("nope", "b"), RatioOfSums("b", "a")]
    )
    assert "column 'k' has type string" in text.error
    assert "column 'nope' does not exist" in missing.error
    assert working.value == pytest.approx(9 / 10)


def test_ratio_of_sums_state_merges_like_the_union(spark, data) -> None:
    first = run_analysis(data.where("id <= 4"), [RatioOfSums("a", "b")])
    second = run_analysis(
        data.where("id > 4"), [RatioOfSums("a", "b")], aggregate_with=first.states
    )
    assert second.metric(RatioOfSums("a", "b")).value == pytest.approx(10 / 9)


# -- DuplicateRowCount -----------------------------------------------------------------------
def test_duplicate_row_count_counts_rows_not_keys(data) -> None:
    one, two, filtered = metrics(
        data,
        [
            DuplicateRowCount("k"),
            DuplicateRowCount(["k", "b"]),
            DuplicateRowCount("k", where="id <= 3"),
        ],
    )
    assert one.value == 5.0  # x three times, y twice; the two all-NULL keys are skipped
    assert two.value == 4.0  # (x, 2.0) twice, (y, NULL) twice: a partly NULL key is a key
    assert filtered.value == 2.0  # x, y, x


def test_duplicate_row_count_is_zero_without_rows(data, empty) -> None:
    (on_empty,) = metrics(empty, [DuplicateRowCount("k")])
    (nothing,) = metrics(data, [DuplicateRowCount("k", where="id > 100")])
    assert on_empty.value == 0.0 and nothing.value == 0.0


def test_duplicate_row_count_errors_and_needs_columns(data) -> None:
    grouped_map, missing, ok = metrics(
        data, [DuplicateRowCount("m"), DuplicateRowCount("nope"), DuplicateRowCount("id")]
    )
    assert "maps cannot be grouped" in grouped_map.error
    assert "column 'nope' does not exist" in missing.error
    assert ok.value == 0.0
    with pytest.raises(ValueError, match="at least one column"):
        DuplicateRowCount([])


# -- shared passes ---------------------------------------------------------------------------
@pytest.mark.classic_only
def test_they_join_the_shared_scan_and_the_grouping_query(spark, data) -> None:
    baseline = [Size(), Uniqueness(["k", "b"]), Uniqueness("k", where="id <= 3")]
    added = [
        ZerosCount("a"),
        ZerosCount("b", "id > 2"),
        RatioOfSums("a", "b"),
        RatioOfSums("a", "b", "id >= 3"),
        DuplicateRowCount(["k", "b"]),
        DuplicateRowCount("k", where="id <= 3"),
    ]
    base, base_jobs = count_jobs(spark, lambda: run_analysis(data, baseline))
    both, jobs = count_jobs(spark, lambda: run_analysis(data, baseline + added))
    assert jobs == base_jobs and both.spark_actions == base.spark_actions == 2
    assert all(both.metric(a).ok for a in added)


# -- Check constraints -----------------------------------------------------------------------
def _last(result, name):
    found = next(r for r in result.check_results if r.check.description == name)
    return found.constraint_results[-1]


def test_check_constraints(data) -> None:
    checks = {
        "zeros": Check(CheckLevel.ERROR, "zeros").has_zeros_count("a", lambda n: n == 3),
        "zeros where": Check(CheckLevel.ERROR, "zeros where")
        .has_zeros_count("a", lambda n: n == 0)
        .where("id = 5"),
        "ratio": Check(CheckLevel.ERROR, "ratio").has_ratio_of_sums("a", "b", lambda v: v > 1),
        "ratio zero": Check(CheckLevel.ERROR, "ratio zero")
        .has_ratio_of_sums("a", "b", lambda v: v > 0)
        .where("id = 4"),
        "dups": Check(CheckLevel.ERROR, "dups").has_duplicate_row_count("k", lambda n: n == 0),
        "dups where": Check(CheckLevel.ERROR, "dups where")
        .has_duplicate_row_count(["k"], lambda n: n == 0)
        .where("id >= 4"),
        "numeric": Check(CheckLevel.ERROR, "numeric").has_data_type(
            "k", "Numeric", lambda v: v == 0
        ),
    }
    result = VerificationSuite(data).add_checks(list(checks.values())).run()
    expected = {
        "zeros": (ConstraintStatus.SUCCESS, 3.0),
        "zeros where": (ConstraintStatus.SUCCESS, 0.0),
        "ratio": (ConstraintStatus.SUCCESS, 10 / 9),
        "ratio zero": (ConstraintStatus.FAILURE, None),
        "dups": (ConstraintStatus.FAILURE, 5.0),
        "dups where": (ConstraintStatus.SUCCESS, 0.0),  # x, z, y: once each
        "numeric": (ConstraintStatus.SUCCESS, 0.0),
    }
    for name, (status, value) in expected.items():
        found = _last(result, name)
        assert found.status is status, (name, found.message)
        if value is not None:
            assert found.value == pytest.approx(value), name
    assert "denominator sums to zero" in _last(result, "ratio zero").message
    assert result.spark_actions <= 2  # one scan, one grouping query


def test_duplicate_row_count_failing_rows_are_the_duplicates(data) -> None:
    check = Check(CheckLevel.ERROR, "dups").has_duplicate_row_count("k", lambda n: n == 0)
    result = VerificationSuite(data).add_check(check).run()
    rows = result.row_level_results(data).orderBy("id").collect()
    # x: ids 1, 3, 5; y: ids 2, 7 are duplicates; z and the NULL keys are not
    assert [r["id"] for r in rows if not r["dups"]] == [1, 2, 3, 5, 7]


# -- DataType as a ratio (Deequ's hasDataType) -----------------------------------------------
@pytest.fixture(scope="module")
def codes(spark):
    values = ["1", "2.5", "x", None, "true", "-3", None, "4e2"]
    return spark.createDataFrame([(v,) for v in values], "code string")


@pytest.mark.parametrize(
    ("data_type", "expected"),
    [
        ("Integral", 2 / 6),  # over the non-NULL values, as Deequ's ignoreUnknown ratio
        ("Fractional", 2 / 6),
        ("Numeric", 4 / 6),  # Integral + Fractional
        ("Boolean", 1 / 6),
        ("String", 1 / 6),
        ("Null", 2 / 8),  # the NULL share is over all values
    ],
)
def test_has_data_type_ratio_matches_deequ(codes, data_type, expected) -> None:
    check = Check(CheckLevel.ERROR, data_type).has_data_type(
        "code", data_type, lambda v: v == pytest.approx(expected)
    )
    found = VerificationSuite(codes).add_check(check).run().check_results[0].constraint_results[0]
    assert found.status is ConstraintStatus.SUCCESS, found.message
    assert found.value == pytest.approx(expected)


def test_has_data_type_of_an_absent_type_is_zero_and_unknown_types_raise(codes) -> None:
    check = (
        Check(CheckLevel.ERROR, "ints")
        .has_data_type("code", "Integral", lambda v: v == 0)
        .where("code = 'x'")
    )
    found = VerificationSuite(codes).add_check(check).run().check_results[0].constraint_results[0]
    assert found.status is ConstraintStatus.SUCCESS and found.value == 0.0
    with pytest.raises(ValueError, match="unknown data type 'Integer'"):
        Check(CheckLevel.ERROR, "bad").has_data_type("code", "Integer")
