from __future__ import annotations

from checkers import AlertLevel, Status
from checks.examples import FlightPlanesKnown
from checks.testing import assert_outcome, evaluate_check, run_on_rows
from tests.checks.examples.conftest import NOW

PLANES = [{"tailnum": "N1UA"}]


def rows(*flights: tuple[str, str | None]) -> dict[str, list[dict[str, object]]]:
    return {
        "flights": [{"id": i, "carrier": c, "tailnum": t} for i, (c, t) in enumerate(flights)],
        "planes": PLANES,
    }


def test_known_carriers_are_tolerated_and_new_gaps_alert(spark):
    assert_outcome(FlightPlanesKnown, rows=rows(("UA", "N1UA"), ("UA", None)), status=Status.PASSED)
    assert_outcome(
        FlightPlanesKnown,
        rows=rows(("UA", "N1UA"), ("AA", "N3A"), ("MQ", "N9M")),
        status=Status.TOLERATED,
    )
    outcome = assert_outcome(
        FlightPlanesKnown, rows=rows(("AA", "N3A"), ("B6", "N77B")), level=AlertLevel.WARNING
    )
    assert (outcome.failing, outcome.unexcused, outcome.failing_keys) == (2, 1, ("N77B",))
    many = rows(*[("DL", f"N{i}DL") for i in range(1001)])
    assert run_on_rows(FlightPlanesKnown, many).level is AlertLevel.CRITICAL


def test_real_data_has_gaps_beyond_the_known_carriers(spark, warehouse):
    outcome = evaluate_check(FlightPlanesKnown, spark=spark, now=NOW)
    assert outcome.status is Status.FAILED
    assert 0 < outcome.unexcused < outcome.failing
    assert all(row["carrier"] not in ("AA", "MQ") for row in outcome.sample)
