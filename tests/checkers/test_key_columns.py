"""Key columns that do not resolve are errors, not failures with empty keys; dotted names are read
literally when a column has that name, else as a path into structs. Configuration mistakes found
while planning are the checker's error, and the other checkers still run."""

from __future__ import annotations

import pytest

from checkers import (
    AggregateComparisonChecker,
    KnownBroken,
    LessThan,
    MetricChecker,
    MetricConstraint,
    PredicateDoubleDatasetsChecker,
    PredicateSingleDatasetChecker,
    run_checkers,
)
from checkers.metrics import Size

# Key columns resolve by plan analysis, which Connect does lazily. (tests/connect_paths.py)
pytestmark = pytest.mark.connect

DOTTED = "id int, `a.b` string, amount double"
ROWS = [(1, "k1", 10.0), (2, "k2", 150.0), (3, "k3", 200.0)]


def test_a_column_literally_named_with_a_dot_is_a_key(make_df):
    orders = make_df(ROWS, DOTTED)
    result = PredicateSingleDatasetChecker(orders, "amount < 100", key="a.b").run()
    assert (result.error, result.failing) == (None, 2)
    assert result.failing_keys() == ["k2", "k3"]
    excused = KnownBroken(["k2"], columns=("a.b",))
    result = PredicateSingleDatasetChecker(orders, "amount < 100").run(excused)
    assert (result.failing, result.unexcused) == (2, 1)


def test_a_dotted_name_reads_into_a_struct_when_no_column_has_that_name(make_df):
    orders = make_df([((1, "x"), 5.0), ((2, "y"), 500.0)], "o struct<id:int, tag:string>, v double")
    result = PredicateSingleDatasetChecker(orders, "v < 100", key=["O.id", "o.tag"]).run()
    assert result.failing_keys() == [[2, "y"]]
    result = PredicateSingleDatasetChecker(orders, "v < 100", key="o.id").run(KnownBroken([2]))
    assert result.unexcused == 0


def test_a_missing_key_column_is_an_error_naming_it_and_the_columns(make_df):
    orders = make_df(ROWS, DOTTED)
    result = PredicateSingleDatasetChecker(orders, "amount < 100", key="order_id").run()
    assert result.error == (
        "configuration error: key column 'order_id' is not a column of the data (columns: id, "
        "a.b, amount); fix key= / on= / KnownBroken(columns=...)"
    )
    assert result.failing == 0
    result = PredicateSingleDatasetChecker(orders, "amount < 100", key="a.c").run()
    assert "key column 'a.c' is not a column" in (result.error or "")
    excused = KnownBroken(["k2"], columns=("order_key",))
    result = PredicateSingleDatasetChecker(orders, "amount < 100").run(excused)
    assert "KnownBroken key column 'order_key' is not a column" in (result.error or "")


def test_join_and_group_keys_resolve_on_each_side(make_df):
    left = make_df([(1, "k1", 1.0), (2, "k2", 2.0)], DOTTED)
    right = make_df([(1, "k1", 1.0), (2, "k2", 9.0)], DOTTED)
    joined = PredicateDoubleDatasetsChecker(left, right, "left.amount = right.amount", on="a.b")
    assert joined.run().failing_keys() == ["k2"]
    grouped = AggregateComparisonChecker(left, right, by="a.b", aggregates={"s": "sum(amount)"})
    assert grouped.run().failing_keys() == ["k2"]
    other = make_df([(1, 1.0)], "order_id int, amount double")
    missing = PredicateDoubleDatasetsChecker(left, other, on="a.b").run()
    assert missing.error is not None
    assert missing.error.startswith(
        "configuration error: join key column 'a.b' is not a column of right (columns: order_id"
    )


def test_configuration_errors_are_the_checkers_error_and_the_others_still_run(make_df):
    orders = make_df(ROWS, DOTTED)
    without_key = PredicateSingleDatasetChecker(orders, "amount < 100")
    metrics = MetricChecker(orders, [MetricConstraint(Size(), lambda n: n > 0)])
    good = PredicateSingleDatasetChecker(orders, "amount < 1000")
    two_columns = PredicateSingleDatasetChecker(orders, "amount < 100", key=["id", "a.b"])
    results = run_checkers(
        [
            (without_key, KnownBroken(["k2"]) | LessThan(2)),
            (metrics, KnownBroken(["k2"], columns=("a.b",))),
            (good, None),
            (two_columns, KnownBroken(["k2"])),
            ("amount < 100", None),  # type: ignore[list-item]
        ]
    )
    assert results[0].error == (
        "configuration error: KnownBroken needs key columns: pass columns= to KnownBroken or "
        "key= to the checker"
    )
    assert results[1].error == (
        "configuration error: KnownBroken keys do not apply to metric constraints"
    )
    assert (results[2].error, results[2].failing, results[2].total) == (None, 0, 3)
    assert results[3].error == (
        "configuration error: KnownBroken key 'k2' needs one value per key column ('id', 'a.b'): "
        "write it as a tuple"
    )
    assert (results[4].error or "").startswith(
        "configuration error: checker() returned str 'amount < 100', not a Checker"
    )
