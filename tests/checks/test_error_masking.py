"""Error messages of checks with masked columns: the values Spark quotes when a cast or a parse
fails (the PII the masking protects) never leave the run; the error still says what failed."""

from __future__ import annotations

import datetime as dt

import pytest

from checkers import PredicateSingleDatasetChecker, Status
from checkers.parsers import CallableParser
from checks import QualityCheck
from scheduling.tick.evaluate import evaluate_checks

# Connect's error messages quote values differently; masking must still hold.
# (tests/connect_paths.py)
pytestmark = pytest.mark.connect

NOW = dt.datetime(2026, 11, 22, 12, 0, tzinfo=dt.UTC)
PII = "alice.pii@example.com"

PEOPLE = CallableParser(
    lambda s: s.createDataFrame(
        [(1, PII, "2026-02-31 x", 12345678901)], "id int, email string, seen string, big bigint"
    ),
    name="people",
)


def people_check(predicate: str, masked: tuple[str, ...]) -> type[QualityCheck]:
    def checker(self, data):
        return PredicateSingleDatasetChecker(data, predicate)

    body = {"parser": PEOPLE, "checker": checker, "masked_columns": masked}
    return type(f"People_{abs(hash((predicate, masked)))}", (QualityCheck,), body, register=False)


# (predicate, Spark's error class, the value its message quotes)
FAILURES = [
    ("CAST(email AS INT) > 0", "[CAST_INVALID_INPUT]", PII),
    ("to_date(email) IS NOT NULL", "[CAST_INVALID_INPUT]", PII),
    ("to_timestamp(seen, 'yyyy-MM-dd') IS NOT NULL", "[CANNOT_PARSE_TIMESTAMP]", "2026-02-31"),
    ("CAST(big AS INT) > 0", "[CAST_OVERFLOW]", "12345678901"),
]


def test_spark_errors_of_masked_checks_withhold_the_values(spark):
    checks = [people_check(p, masked) for p, _, _ in FAILURES for masked in ((), ("email",))]
    outcomes = evaluate_checks(checks, spark=spark, now=NOW)  # one run, as `dq run` does
    for n, (predicate, error_class, value) in enumerate(FAILURES):
        plain, masked = outcomes[2 * n], outcomes[2 * n + 1]
        # the real Spark error does quote the value: this is what masking has to catch
        assert plain.status is Status.ERROR and value in (plain.error or ""), predicate
        assert masked.status is Status.ERROR, predicate
        assert error_class in (masked.error or "") and "***" in (masked.error or ""), predicate
        assert value not in masked.to_json(), predicate
        if error_class.startswith("[CAST"):
            assert 'of the type "' in (masked.error or "")  # still says what failed to cast
