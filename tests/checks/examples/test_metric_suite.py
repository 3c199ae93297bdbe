from __future__ import annotations

import pytest

from checkers import AlertLevel, Status
from checks.examples import FlightsMetricSuite
from checks.testing import assert_outcome, evaluate_check
from tests.checks.examples.conftest import NOW


def flight(id_: int, **changes: object) -> dict[str, object]:
    row = {
        "id": id_,
        "year": 2013,
        "month": 1,
        "day": 1,
        "carrier": "UA",
        "flight": id_,
        "origin": "EWR",
        "sched_dep_time": 600,
        "dep_time": 601.0,
        "dep_delay": 1.0,
        "arr_delay": 3.0,
        "distance": 700,
    }
    return {**row, **changes}


@pytest.mark.connect
def test_levels_follow_the_number_of_failed_constraints(spark):
    good = [flight(i) for i in range(40)]
    assert_outcome(FlightsMetricSuite, rows=good, status=Status.PASSED)
    early = [*good, flight(40, dep_delay=-90.0)]
    outcome = assert_outcome(FlightsMetricSuite, rows=early, level=AlertLevel.WARNING)
    assert [row["constraint"] for row in outcome.sample] == ["no departure an hour early"]
    duplicated = [*good, flight(0)]  # same id and identity twice
    assert_outcome(FlightsMetricSuite, rows=duplicated, level=AlertLevel.ERROR)


@pytest.mark.connect
def test_real_flights_pass(spark, warehouse):
    outcome = evaluate_check(FlightsMetricSuite, spark=spark, now=NOW)
    assert (outcome.status, outcome.total) == (Status.PASSED, 9)
