"""Two datasets side by side: row-level on join keys, and aggregate comparison per key group."""

from __future__ import annotations

import pytest

from checkers import AggregateComparisonChecker, KnownBroken, PredicateDoubleDatasetsChecker

SCHEMA = "id int, day string, amount double"
LEFT = [(1, "d1", 10.0), (2, "d1", 20.0), (3, "d2", 30.0), (None, "d2", 1.0)]
RIGHT = [(1, "d1", 10.0), (2, "d1", 21.0), (4, "d2", 40.0), (None, "d2", 1.0)]


@pytest.fixture
def sides(make_df):
    return make_df(LEFT, SCHEMA), make_df(RIGHT, SCHEMA)


def test_row_level_counts_missing_and_mismatched(sides):
    left, right = sides
    result = PredicateDoubleDatasetsChecker(
        left, right, "left.amount = right.amount", on="id"
    ).run()
    # id 2 differs, 3 only left, 4 only right, NULL keys never match: 2 more one-sided rows
    assert result.metrics["mismatched"] == 1
    assert (result.metrics["missing_in_right"], result.metrics["missing_in_left"]) == (2, 2)
    assert (result.failing, result.total) == (5, 6)
    by_id = {r["id"]: r for r in result.sample()}
    assert by_id[2]["left"]["amount"] == 20.0 and by_id[2]["right"]["amount"] == 21.0
    assert by_id[3]["right"] is None and by_id[4]["left"] is None


def test_missing_rows_can_be_allowed_per_side(sides):
    left, right = sides
    result = PredicateDoubleDatasetsChecker(
        left, right, "left.amount = right.amount", on="id", fail_missing_in_left=False
    ).run()
    assert result.failing == 3  # id 2, id 3 and the left NULL key


def test_presence_only_and_python_predicate(sides):
    left, right = sides
    presence = PredicateDoubleDatasetsChecker(left, right, on=["id", "day"]).run()
    assert presence.failing == 4 and presence.metrics["mismatched"] == 0
    close = PredicateDoubleDatasetsChecker(
        left, right, lambda a, b: abs(a["amount"] - b["amount"]) <= 1.0, on="id"
    ).run()
    assert close.metrics["mismatched"] == 0


def test_known_broken_keys_default_to_join_keys(sides):
    left, right = sides
    checker = PredicateDoubleDatasetsChecker(left, right, "left.amount = right.amount", on="id")
    result = checker.run(KnownBroken([2, 3, 4]))
    assert (result.failing, result.unexcused) == (5, 2)  # the NULL keys stay unexcused


def test_aggregate_comparison_within_tolerances(sides):
    left, right = sides
    aggregates = {"rows": "count(*)", "total": "sum(amount)"}
    exact = AggregateComparisonChecker(left, right, by="day", aggregates=aggregates).run()
    assert (exact.failing, exact.total) == (2, 2)  # d1 sums 30 vs 31, d2 sums 31 vs 41
    loose = AggregateComparisonChecker(left, right, by="day", aggregates=aggregates, relative=0.05)
    assert loose.run().failing == 1  # 1/31 is within 5%, 10/41 is not
    assert (
        AggregateComparisonChecker(left, right, by="day", aggregates=aggregates, absolute=10.0)
        .run()
        .failing
        == 0
    )


def test_aggregate_comparison_matches_null_groups_and_reports_one_sided_groups(make_df):
    left = make_df([(1, None, 1.0), (2, "d1", 2.0)], SCHEMA)
    right = make_df([(1, None, 1.0), (2, "d9", 2.0)], SCHEMA)
    result = AggregateComparisonChecker(left, right, by="day", aggregates={"n": "count(*)"}).run()
    assert (result.failing, result.total) == (2, 3)
    assert (result.metrics["missing_in_left"], result.metrics["missing_in_right"]) == (1, 1)


def test_aggregate_comparison_against_a_pre_aggregated_side(make_df, sides):
    left, _ = sides
    totals = make_df([("d1", 2, 30.0), ("d2", 2, 99.0)], "day string, n long, total double")
    result = AggregateComparisonChecker(
        left,
        totals,
        by="day",
        aggregates={"rows": "count(*)", "total": "sum(amount)"},
        right_aggregates={"rows": "sum(n)", "total": "sum(total)"},
    ).run()
    assert (result.failing, result.total) == (1, 2)
    assert result.sample()[0]["day"] == "d2"


def test_configuration_errors(sides):
    left, right = sides
    with pytest.raises(ValueError, match="join keys"):
        PredicateDoubleDatasetsChecker(left, right, on=[])
    with pytest.raises(ValueError, match="aggregates"):
        AggregateComparisonChecker(left, right, by="day", aggregates={})
    with pytest.raises(ValueError, match="negative"):
        AggregateComparisonChecker(left, right, by="day", aggregates={"n": "count(*)"}, relative=-1)
