"""Size, Completeness, Compliance and PatternMatch on small hand-computed data."""

from __future__ import annotations

import pytest

from checkers.metrics import Completeness, Compliance, PatternMatch, Patterns, Size, run_analysis

SCHEMA = "id int, name string, score double"
ROWS = [
    (1, "ann", 10.0),
    (2, None, 20.0),
    (3, "bob", None),
    (4, "", -5.0),
    (None, "cy", 0.0),
]


@pytest.fixture(scope="module")
def data(spark):
    return spark.createDataFrame(ROWS, SCHEMA)


@pytest.fixture(scope="module")
def empty(spark):
    return spark.createDataFrame([], SCHEMA)


def values(df, analyzers):
    result = run_analysis(df, analyzers)
    return [result.metric(a) for a in analyzers]


def test_size_counts_rows_and_filtered_rows(data) -> None:
    total, filtered, null_filter = values(
        data, [Size(), Size(where="score > 0"), Size(where="id > 2")]
    )
    assert total.value == 5.0
    assert filtered.value == 2.0
    assert null_filter.value == 2.0  # the row with a NULL id is not counted


def test_size_of_empty_input_is_zero(empty) -> None:
    assert values(empty, [Size()])[0].value == 0.0


def test_completeness_counts_nulls_as_missing(data) -> None:
    name, name_where, ident = values(
        data,
        [Completeness("name"), Completeness("name", where="id <= 2"), Completeness("id")],
    )
    assert name.value == pytest.approx(4 / 5)  # "" is present, NULL is not
    assert name_where.value == pytest.approx(1 / 2)
    assert ident.value == pytest.approx(4 / 5)


def test_completeness_with_nothing_to_evaluate_is_an_error(data, empty) -> None:
    (on_empty,) = values(empty, [Completeness("name")])
    (filtered_away,) = values(data, [Completeness("name", where="id > 100")])
    for metric in (on_empty, filtered_away):
        assert not metric.ok
        assert "Empty state" in metric.error


def test_completeness_of_missing_column_is_an_error_and_others_still_run(data) -> None:
    result = run_analysis(data, [Completeness("nope"), Size(), Completeness("id")])
    missing = result.metric(Completeness("nope"))
    assert "column 'nope' does not exist" in missing.error
    assert result.metric(Size()).value == 5.0
    assert result.metric(Completeness("id")).value == pytest.approx(0.8)
    assert result.spark_actions == 1


def test_compliance_counts_null_predicate_as_not_compliant(data) -> None:
    positive, filtered = values(
        data,
        [
            Compliance("positive score", "score > 0"),
            Compliance("positive score", "score > 0", where="id >= 2"),
        ],
    )
    assert positive.value == pytest.approx(2 / 5)  # NULL score is not compliant
    assert positive.instance == "positive score"
    assert filtered.value == pytest.approx(1 / 3)  # ids 2,3,4: only 20.0 passes


def test_compliance_with_unresolvable_predicate_is_an_error_alone(data) -> None:
    bad = Compliance("bad", "missing_col > 1")
    good = Compliance("ok", "id > 1")
    result = run_analysis(data, [bad, good, Size()])
    assert not result.metric(bad).ok
    assert "missing_col" in result.metric(bad).error
    assert result.metric(good).value == pytest.approx(3 / 5)
    assert result.metric(Size()).value == 5.0


def test_compliance_declared_columns_are_checked_up_front(data) -> None:
    (metric,) = values(data, [Compliance("c", "nope > 1", predicate_columns=("nope",))])
    assert "column 'nope' does not exist" in metric.error


def test_compliance_on_empty_input_is_an_error(empty) -> None:
    (metric,) = values(empty, [Compliance("c", "id > 1")])
    assert not metric.ok


def test_pattern_match_find_semantics_and_nulls(data) -> None:
    contains_b, whole, with_where = values(
        data,
        [
            PatternMatch("name", "b"),
            PatternMatch("name", "^[a-z]{3}$"),
            PatternMatch("name", "^[a-z]{3}$", where="id <= 3"),
        ],
    )
    assert contains_b.value == pytest.approx(1 / 5)  # only "bob"; NULL counts as no match
    assert whole.value == pytest.approx(2 / 5)  # "ann", "bob"
    assert with_where.value == pytest.approx(2 / 3)


def test_pattern_match_needs_a_string_column(data) -> None:
    (metric,) = values(data, [PatternMatch("score", "1")])
    assert "has type double" in metric.error and "string column" in metric.error


def test_builtin_email_pattern(make_df) -> None:
    df = make_df([("a@b.org",), ("not an email",), ("x.y@z.co",), (None,)], "mail string")
    (metric,) = values(df, [PatternMatch("mail", Patterns.EMAIL)])
    assert metric.value == pytest.approx(2 / 4)
