"""Row predicate checkers on real Spark: SQL, Column and Python predicates, NULLs, KnownBroken
keys, samples, errors, and one aggregation job for many checkers over one DataFrame."""

from __future__ import annotations

import pytest
from pyspark.sql import functions as F

from checkers import (
    KnownBroken,
    OffsetPredicateSingleDatasetChecker,
    PredicateSingleDatasetChecker,
    run_checkers,
)
from tests.metrics.jobs import count_jobs

# Python predicates are pandas UDFs, run by the server's Python workers. (tests/connect_paths.py)
pytestmark = pytest.mark.connect

SCHEMA = "id int, carrier string, delay double"
ROWS = [(1, "UA", 5.0), (2, "AA", None), (3, "UA", 700.0), (4, None, 12.0), (5, "B6", 900.0)]


@pytest.fixture
def flights(make_df):
    return make_df(ROWS, SCHEMA)


PREDICATES = {
    "sql": lambda: "delay < 600",
    "column": lambda: F.col("delay") < 600,
    "python": lambda: lambda row: row["delay"] is not None and row["delay"] < 600,
}


@pytest.mark.parametrize("form", sorted(PREDICATES))
def test_predicate_forms_agree_and_null_fails(flights, form):
    predicate = PREDICATES[form]()
    result = PredicateSingleDatasetChecker(flights, predicate).run()
    assert (result.failing, result.total, result.rows) == (3, 5, 5)  # 700, 900 and NULL
    assert sorted(r["id"] for r in result.sample()) == [2, 3, 5]


def test_known_broken_keys_are_excused_and_left_out_of_the_sample(flights):
    checker = PredicateSingleDatasetChecker(flights, "delay < 600", key="id")
    result = checker.run(KnownBroken([2, 3]))
    assert (result.failing, result.unexcused) == (3, 1)
    assert [r["id"] for r in result.sample()] == [5]
    assert result.failing_keys() == [5]


def test_failing_keys_are_distinct_sorted_and_bounded(make_df):
    df = make_df([(c, i) for i, c in enumerate("ccbbaad")], "code string, i int")
    checker = PredicateSingleDatasetChecker(df, "code = 'd'", key="code")
    result = checker.run()
    assert result.failing_keys() == ["a", "b", "c"] and len(result.failing_keys(2)) == 2
    assert PredicateSingleDatasetChecker(df, "i < 0").run().failing_keys() == []  # no key


def test_known_broken_on_several_columns(flights):
    checker = PredicateSingleDatasetChecker(flights, "delay < 600")
    result = checker.run(KnownBroken([(3, "UA"), (5, "XX")], columns=("id", "carrier")))
    assert (result.failing, result.unexcused) == (3, 2)


def test_known_broken_without_key_columns_is_a_configuration_error(flights):
    result = PredicateSingleDatasetChecker(flights, "delay < 600").run(KnownBroken([1]))
    assert (result.error or "").startswith("configuration error: KnownBroken needs key columns")


def test_sample_is_bounded_and_skipped_when_nothing_failed(flights):
    failing = PredicateSingleDatasetChecker(flights, "id < 0").run()
    assert len(failing.sample(2)) == 2
    passing = PredicateSingleDatasetChecker(flights, "id > 0").run()
    assert passing.failing == 0 and passing.sample() == []


def test_missing_column_is_an_error_naming_it_and_others_still_run(flights):
    bad, good = (
        PredicateSingleDatasetChecker(flights, "departure_delay < 5"),
        PredicateSingleDatasetChecker(flights, "id > 1"),
    )
    bad_result, good_result = run_checkers([bad, good])
    assert bad_result.error is not None and "departure_delay" in bad_result.error
    assert (good_result.failing, good_result.error) == (1, None)


def test_python_predicate_that_raises_is_an_error(flights):
    result = PredicateSingleDatasetChecker(flights, lambda row: 1 / 0).run()
    assert result.error is not None and "ZeroDivisionError" in result.error


NOT_BOOLEAN = {"delay": ("delay", "DOUBLE"), "column": ("id", "INT"), "sum": ("id + 1", "INT")}


@pytest.mark.parametrize("case", sorted(NOT_BOOLEAN))
def test_a_sql_or_column_predicate_that_is_not_boolean_is_an_error_naming_its_type(flights, case):
    predicate, kind = NOT_BOOLEAN[case]
    if case == "column":
        predicate = F.col(predicate)
    result = PredicateSingleDatasetChecker(flights, predicate).run()
    assert result.error is not None and result.error.startswith("the predicate "), result.error
    assert f" is {kind}, not BOOLEAN: a predicate must be true or false for each row" in (
        result.error
    )


def test_a_text_predicate_is_cast_by_sparks_rules_as_in_a_where_clause(make_df):
    """Documented (docs/checkers.md): 'yes' passes and 'no' fails, as in Spark SQL's WHERE;
    text that is no truth value is an ERROR, never a pass."""
    answers = make_df([(1, "yes"), (2, "no"), (3, "true"), (4, "0")], "id int, ok string")
    assert PredicateSingleDatasetChecker(answers, "ok").run().failing == 2
    maybe = make_df([(1, "maybe")], "id int, ok string")
    error = PredicateSingleDatasetChecker(maybe, F.col("ok")).run().error
    assert error is not None and "CAST_INVALID_INPUT" in error and "BOOLEAN" in error


@pytest.mark.classic_only  # counts jobs through the SparkContext
def test_a_python_predicate_going_wrong_costs_its_pass_nothing(spark, flights):
    # Its problems are counted in the pass, not raised: no failed job, no isolation reruns, and
    # the checks sharing the pass keep their counts.
    checkers = [
        PredicateSingleDatasetChecker(flights, "delay < 600"),
        PredicateSingleDatasetChecker(flights, lambda row: "yes" if row["id"] > 3 else True),
        PredicateSingleDatasetChecker(flights, PREDICATES["python"]()),
    ]
    results, jobs = count_jobs(spark, lambda: run_checkers(checkers))
    assert jobs == 1
    assert [r.failing for r in (results[0], results[2])] == [3, 3]
    assert results[1].error == (
        "the Python predicate went wrong on 2 rows, e.g. TypeError: a Python predicate must "
        "return True or False, it returned 'yes' (str)"
    )


@pytest.mark.classic_only  # counts jobs through the SparkContext
def test_five_checkers_over_one_dataset_samples_included_cost_one_job(spark, flights):
    predicates = ["delay < 600", "id > 0", "carrier IS NOT NULL", "delay >= 0", "id < 100"]
    checkers = [PredicateSingleDatasetChecker(flights, p, key="id") for p in predicates]

    def evaluate():
        results = run_checkers(checkers)
        return results, [(r.sample(), r.failing_keys()) for r in results]

    (results, samples), jobs = count_jobs(spark, evaluate)
    assert jobs == 1  # the samples and failing keys came with the counts
    assert [r.failing for r in results] == [3, 0, 1, 1, 0]
    assert [sorted(keys) for _, keys in samples] == [[2, 3, 5], [], [4], [2], []]
    assert [sorted(r["id"] for r in rows) for rows, _ in samples] == [[2, 3, 5], [], [4], [2], []]


def test_offset_predicate_per_partition_in_order(make_df):
    legs = make_df(
        [
            ("N1", 1, 10, 20),
            ("N1", 2, 25, 40),
            ("N1", 3, 35, 50),
            ("N2", 1, 5, 9),
            ("N2", 2, 8, 12),
        ],
        "tail string, leg int, dep int, arr int",
    )
    checker = OffsetPredicateSingleDatasetChecker(
        legs, "previous.arr <= current.dep", order_by=["leg"], partition_by=["tail"]
    )
    result = checker.run()
    assert (result.failing, result.total) == (2, 3)  # first leg of each tail is not judged
    failed = sorted((r["tail"], r["leg"], r["previous"]["arr"]) for r in result.sample())
    assert failed == [("N1", 3, 40), ("N2", 2, 9)]
    assert checker.run(KnownBroken(["N2"])).unexcused == 1  # key defaults to partition_by


def test_offset_two_apart_with_python_predicate(make_df):
    values = make_df([(i, v) for i, v in enumerate([1, 2, 3, 1, 5, 6])], "i int, v int")
    checker = OffsetPredicateSingleDatasetChecker(
        values, lambda previous, current: previous["v"] < current["v"], order_by=["i"], offset=2
    )
    result = checker.run()
    # pairs (1,3) (2,1) (3,5) (1,6): only 2 -> 1 fails
    assert (result.failing, result.total) == (1, 4)


def test_offset_needs_order_and_positive_offset(flights):
    with pytest.raises(ValueError, match="order_by"):
        OffsetPredicateSingleDatasetChecker(flights, "true", order_by=[])
    with pytest.raises(ValueError, match="at least 1"):
        OffsetPredicateSingleDatasetChecker(flights, "true", order_by=["id"], offset=0)


def test_empty_dataset_reports_zero_rows(make_df):
    result = PredicateSingleDatasetChecker(make_df([], SCHEMA), "id > 0").run()
    assert (result.failing, result.rows, result.error) == (0, 0, None)
