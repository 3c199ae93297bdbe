"""Running checks into outcomes: statuses, levels, errors isolated per check, empty datasets,
shared sources and samples only for failed checks."""

from __future__ import annotations

import datetime as dt

import pytest

from checkers import (
    AlertLevel,
    FailingElementsThresholds,
    KnownBroken,
    LessThan,
    PredicateSingleDatasetChecker,
    Status,
)
from checkers.parsers import CallableParser, CsvParser
from checks import QualityCheck
from scheduling.tick.evaluate import EMPTY_DATASET, evaluate_check, evaluate_checks
from tests.metrics.jobs import count_jobs

# The run path end to end: errors, predicates and samples over the session. (tests/connect_paths.py)
pytestmark = pytest.mark.connect

NOW = dt.datetime(2026, 11, 22, 12, 0, tzinfo=dt.UTC)
loads: list[int] = []


def _numbers(spark):
    loads.append(1)
    return spark.createDataFrame([(i, i % 7) for i in range(1, 101)], "n int, mod int")


NUMBERS = CallableParser(_numbers, name="numbers")


def numbers_check(predicate: str, **attributes) -> type[QualityCheck]:
    def checker(self, data):
        return PredicateSingleDatasetChecker(data, predicate, key=attributes.pop("key", ()))

    body = {"parser": NUMBERS, "checker": checker, "description": predicate, **attributes}
    return type(f"Numbers_{abs(hash(predicate))}", (QualityCheck,), body, register=False)


@pytest.mark.parametrize(
    ("predicate", "attributes", "status", "level"),
    [
        ("n > 0", {}, Status.PASSED, AlertLevel.OK),
        ("n > 3", {"tolerance": LessThan(4)}, Status.TOLERATED, AlertLevel.OK),
        (
            "n > 3",
            {"alert_level": FailingElementsThresholds(2, 5)},
            Status.FAILED,
            AlertLevel.ERROR,
        ),
        (
            "n > 1",
            {"alert_level": FailingElementsThresholds(2, 5)},
            Status.FAILED,
            AlertLevel.WARNING,
        ),
        (
            "n > 50",
            {"alert_level": FailingElementsThresholds(2, 5)},
            Status.FAILED,
            AlertLevel.CRITICAL,
        ),
        (
            "n > 3",
            {"tolerance": KnownBroken([1, 2, 3]), "key": "n"},
            Status.TOLERATED,
            AlertLevel.OK,
        ),
    ],
)
def test_status_and_level(spark, predicate, attributes, status, level):
    outcome = evaluate_check(numbers_check(predicate, **attributes), spark=spark, now=NOW)
    assert (outcome.status, outcome.level) == (status, level)
    assert outcome.total == 100 and outcome.started_at == NOW
    assert bool(outcome.sample) == (status is Status.FAILED)
    assert outcome.level_reason == LEVEL_SET_BY.get((predicate, level), ""), outcome.level_reason


#: Which threshold set each level above, as the outcome records it.
LEVEL_SET_BY = {
    ("n > 3", AlertLevel.ERROR): "ERROR: 3 failing > warning threshold 2, <= error threshold 5",
    ("n > 1", AlertLevel.WARNING): "WARNING: 1 failing <= warning threshold 2",
    ("n > 50", AlertLevel.CRITICAL): "CRITICAL: 50 failing > error threshold 5",
}


def test_known_broken_levels_count_only_new_failures(spark):
    check = numbers_check(
        "n > 10",
        tolerance=KnownBroken(range(1, 9)),
        key="n",
        alert_level=FailingElementsThresholds(1, 5),
    )
    outcome = evaluate_check(check, spark=spark, now=NOW)
    assert (outcome.status, outcome.level, outcome.failing, outcome.unexcused) == (
        Status.FAILED,
        AlertLevel.ERROR,
        10,
        2,
    )
    assert outcome.level_reason == "ERROR: 2 failing > warning threshold 1, <= error threshold 5"
    assert sorted(row["n"] for row in outcome.sample) == [9, 10]
    assert outcome.failing_keys == (9, 10)


def test_broken_checks_are_errors_and_the_others_still_run(spark, tmp_path):
    class MissingColumn(QualityCheck, register=False):
        parser = NUMBERS
        error_level = AlertLevel.CRITICAL

        def checker(self, data):
            return PredicateSingleDatasetChecker(data, "amount > 0")

    class Unreadable(QualityCheck, register=False):
        parser = CsvParser(str(tmp_path / "missing.csv"))

        def checker(self, data):
            return PredicateSingleDatasetChecker(data, "true")

    class BuggyChecker(QualityCheck, register=False):
        parser = NUMBERS

        def checker(self, data):
            raise RuntimeError("typo in the check")

    good = numbers_check("n > 0")
    missing, unreadable, buggy, fine = evaluate_checks(
        [MissingColumn, Unreadable, BuggyChecker, good], spark=spark, now=NOW
    )
    assert (missing.status, missing.level) == (Status.ERROR, AlertLevel.CRITICAL)
    assert "amount" in missing.error
    assert unreadable.status is Status.ERROR and "missing.csv" in unreadable.error
    assert buggy.status is Status.ERROR and "RuntimeError: typo in the check" in buggy.error
    assert fine.status is Status.PASSED


def test_empty_dataset_is_an_error_unless_allowed(spark):
    empty = CallableParser(lambda s: s.createDataFrame([], "n int"), name="empty")

    class Strict(QualityCheck, register=False):
        parser = empty

        def checker(self, data):
            return PredicateSingleDatasetChecker(data, "n > 0")

    class Lenient(Strict, register=False):
        allow_empty = True

    strict, lenient = evaluate_checks([Strict, Lenient], spark=spark, now=NOW)
    assert (strict.status, strict.error) == (Status.ERROR, EMPTY_DATASET)
    assert lenient.status is Status.PASSED


@pytest.mark.classic_only  # counts jobs through the SparkContext
def test_checks_on_one_source_share_the_read_and_one_job(spark):
    checks = [numbers_check(p) for p in ["n > 0", "mod >= 0", "n < 1000", "mod < 7", "n != 0"]]
    loads.clear()
    outcomes, jobs = count_jobs(spark, lambda: evaluate_checks(checks, spark=spark, now=NOW))
    assert len(loads) == 1 and jobs == 1
    assert all(o.status is Status.PASSED for o in outcomes)
    failing = [numbers_check("n > 5"), numbers_check("n > 0")]
    outcomes, jobs = count_jobs(spark, lambda: evaluate_checks(failing, spark=spark, now=NOW))
    assert [o.status for o in outcomes] == [Status.FAILED, Status.PASSED]
    assert jobs == 1 and outcomes[0].sample  # the failed check's sample came with the counts


def test_outcome_carries_what_alerts_need(spark):
    check = numbers_check("n > 2", owner="growth", tags=("numbers",))
    outcome = evaluate_check(check, spark=spark, now=NOW)
    assert outcome.description == "n > 2" and outcome.owner == "growth"
    assert outcome.tags == ("numbers",) and outcome.tolerance == "no failures"
    assert outcome.metrics["failing"] == 2 and set(outcome.timings) >= {"load_s", "evaluate_s"}
    assert outcome.finished_at >= outcome.started_at


def test_bad_inputs_are_errors_naming_their_cause(spark, tmp_path):
    malformed = tmp_path / "malformed.csv"
    malformed.write_text("n,mod\n1,1\n2,two\n")
    renamed = tmp_path / "renamed.csv"
    renamed.write_text("number,mod\n1,1\n")

    def check(name: str, parser, predicate: str = "n > 0") -> type[QualityCheck]:
        def checker(self, data):
            return PredicateSingleDatasetChecker(data, predicate)

        return type(name, (QualityCheck,), {"parser": parser, "checker": checker}, register=False)

    from checkers.parsers import SqlQueryParser

    outcomes = evaluate_checks(
        [
            check("MissingColumn", NUMBERS, "amount > 0"),
            check(
                "Unreachable", SqlQueryParser("postgresql+psycopg://dq@127.0.0.1:1/ops", "SELECT 1")
            ),
            check("Malformed", CsvParser(str(malformed), schema="n int, mod int")),
            check("BrokenPromise", CallableParser(_numbers, schema="n int, amount double")),
            check("RenamedHeader", CsvParser(str(renamed), schema="n int, mod int")),
            check("StillFine", NUMBERS),
        ],
        spark=spark,
        now=NOW,
    )
    by_name = {o.check: o for o in outcomes}
    expected = {
        "missing_column": "`amount` cannot be resolved",
        "unreachable": "127.0.0.1",
        "malformed": "Malformed records",
        "broken_promise": "column 'amount' is missing",
        "renamed_header": "CSV header does not conform to the schema",
    }
    for name, cause in expected.items():
        assert by_name[name].status is Status.ERROR, by_name[name].summary()
        assert cause in by_name[name].error, by_name[name].error
    assert by_name["still_fine"].status is Status.PASSED


@pytest.mark.classic_only  # counts jobs through the SparkContext
def test_the_full_scan_of_a_text_source_shares_the_checkers_pass(spark, tmp_path):
    path = tmp_path / "numbers.csv"
    path.write_text("n,mod\n" + "".join(f"{i},{i % 7}\n" for i in range(1, 51)))
    parser = CsvParser(str(path), schema="n int, mod int")

    def check(name: str, predicate: str) -> type[QualityCheck]:
        def checker(self, data):
            return PredicateSingleDatasetChecker(data, predicate)

        return type(name, (QualityCheck,), {"parser": parser, "checker": checker}, register=False)

    checks = [check("Positive", "n > 0"), check("Small", "mod < 7")]
    outcomes, jobs = count_jobs(spark, lambda: evaluate_checks(checks, spark=spark, now=NOW))
    assert [o.status for o in outcomes] == [Status.PASSED, Status.PASSED]
    assert jobs == 1


def test_masked_columns_never_leave_the_run(spark):
    people = CallableParser(
        lambda s: s.createDataFrame(
            [("ana@example.com", 1, "x"), ("bo@example.com", -1, "y")],
            "email string, n int, t string",
        ),
        name="people",
    )

    class Masked(QualityCheck, register=False):
        parser = people
        masked_columns = ("email",)

        def checker(self, data):
            return PredicateSingleDatasetChecker(data, "n > 0", key="email")

    outcome = evaluate_check(Masked, spark=spark, now=NOW)
    assert outcome.status is Status.FAILED
    assert outcome.sample == ({"email": "***", "n": -1, "t": "y"},)
    assert outcome.failing_keys == () and "example.com" not in outcome.to_json()
