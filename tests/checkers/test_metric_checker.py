from __future__ import annotations

import pytest

from checkers import KnownBroken, MetricChecker, MetricConstraint
from checkers.metrics import Check, CheckLevel, Completeness, Maximum, Size, Uniqueness

SCHEMA = "id int, name string"


@pytest.fixture
def people(make_df):
    return make_df([(1, "a"), (2, None), (2, "c"), (4, "d")], SCHEMA)


def test_failing_elements_are_failed_constraints_with_reasons(people):
    checker = MetricChecker(
        people,
        [
            MetricConstraint(Size(), lambda v: v == 4, "four rows"),
            MetricConstraint(Completeness("name"), lambda v: v >= 0.9, "names present"),
            MetricConstraint(Uniqueness(["id"]), lambda v: v == 1.0, "ids unique"),
            MetricConstraint(Maximum("id"), lambda v: v <= 4),
        ],
    )
    result = checker.run()
    assert (result.failing, result.total, result.rows) == (2, 4, 4)
    assert result.metrics["names present"] == 0.75
    failed = {row["constraint"]: row for row in result.sample()}
    assert set(failed) == {"names present", "ids unique"}
    assert (
        failed["ids unique"]["value"] == 0.5 and "does not meet" in failed["ids unique"]["reason"]
    )


def test_undefined_metric_and_raising_assertion_fail_their_constraint(make_df):
    nulls = make_df([(None, "a")], SCHEMA)
    result = MetricChecker(
        nulls,
        [
            MetricConstraint(Maximum("id"), lambda v: v < 10, "max id"),
            MetricConstraint(Size(), lambda v: v.nope, "broken assertion"),
        ],
    ).run()
    reasons = {row["constraint"]: row["reason"] for row in result.sample()}
    assert reasons["max id"].startswith("metric could not be computed")
    assert reasons["broken assertion"].startswith("assertion raised AttributeError")


def test_missing_column_makes_the_checker_an_error(people):
    result = MetricChecker(people, [MetricConstraint(Completeness("email"), lambda v: v > 0)]).run()
    assert result.error is not None and "'email' does not exist" in result.error


def test_configuration_errors(people):
    with pytest.raises(ValueError, match="at least one"):
        MetricChecker(people, [])
    checker = MetricChecker(people, [MetricConstraint(Size(), lambda v: v > 0)])
    result = checker.run(KnownBroken([1], columns="id"))  # this checker's error, not the run's
    assert (
        result.error == "configuration error: KnownBroken keys do not apply to metric constraints"
    )


def test_a_predictability_constraint_is_an_element_like_the_others(make_df):
    """The label is the first word of `text`, the other input is noise: `text` predicts it
    perfectly and `noise` at chance level, each a constraint of one checker."""
    rows = [(f"w{i % 4} x{i % 7}", f"n{i % 3}", f"c{i % 4}") for i in range(400)]
    data = make_df(rows, "text string, noise string, label string")
    checker = MetricChecker(
        data,
        [
            Check(CheckLevel.ERROR, "labels")
            .has_predictability("label", ["text"], lambda f1: f1 == 1.0, "text gives the label")
            .has_predictability("label", ["noise"], lambda f1: f1 > 0.9, "noise does not")
        ],
    )
    result = checker.run()
    assert (result.failing, result.total, result.error) == (1, 2, None)
    (failed,) = result.sample()
    assert failed["metric"] == "Predictability" and failed["instance"] == "label,noise"
    assert failed["value"] < 0.5


@pytest.mark.connect  # Spark Connect answers plan equality (semanticHash, sameSemantics)
def test_a_shared_pass_saves_only_the_metric_checkers_own_metrics(people, tmp_path):
    """Checkers over the same data share one engine pass, which computes every checker's
    analyzers: the metric history keeps only the metric checker's own."""
    import datetime as dt

    from checkers import PredicateSingleDatasetChecker
    from checkers.checker import run_checkers
    from checkers.metrics import MetricsRepository, ResultKey
    from checkers.metrics.metric_history import MetricHistory

    repository = MetricsRepository(f"sqlite:///{tmp_path / 'history.db'}")
    key = ResultKey(dt.datetime(2026, 11, 25, tzinfo=dt.UTC))
    history = MetricHistory(repository, key, "people")
    metric = MetricChecker(people, [MetricConstraint(Size(), lambda v: v == 4)], history=history)
    rows = PredicateSingleDatasetChecker(people.filter("id > 0"), "name IS NOT NULL")
    same = PredicateSingleDatasetChecker(people.filter("id > 0"), "id < 10")
    other = MetricChecker(people, [MetricConstraint(Completeness("name"), lambda v: v > 0)])
    results = run_checkers([metric, rows, same, other])
    assert results[1].engine_pass == results[2].engine_pass  # same data, two DataFrame objects
    assert results[0].engine_pass == results[3].engine_pass != results[1].engine_pass
    assert [r.name for r in repository.query(source_table="people")] == ["Size"]
