from __future__ import annotations

import pandas as pd

from checkers import AlertLevel, Status
from checks.examples import FlightDestinationsKnown
from checks.testing import assert_outcome, evaluate_check
from tests.checks.examples.conftest import NOW

AIRPORTS = [{"faa": "ORD", "name": "Chicago O'Hare"}, {"faa": "IAH", "name": "Houston"}]


def test_flights_to_unknown_airports_are_found_exactly(spark, warehouse):
    outcome = evaluate_check(FlightDestinationsKnown, spark=spark, now=NOW)
    flights = pd.read_parquet(warehouse.root / "lake" / "flights")
    airports = pd.read_parquet(warehouse.root / "lake" / "airports")
    unknown = flights[~flights["dest"].isin(airports["faa"])]
    assert outcome.status is Status.FAILED
    assert (outcome.failing, outcome.total) == (len(unknown), len(flights))
    assert list(outcome.failing_keys) == sorted(unknown["dest"].unique())
    assert set(outcome.failing_keys) == {"BQN", "PSE", "SJU", "STT"}  # the real gaps


def test_team_style_levels(spark):
    known = [{"id": i, "dest": "ORD"} for i in range(1, 1001)]
    assert_outcome(
        FlightDestinationsKnown,
        rows={"flights": known, "airports": AIRPORTS},
        level=AlertLevel.OK,
    )
    one_unknown = [*known, {"id": 1001, "dest": "SJU"}]
    outcome = assert_outcome(
        FlightDestinationsKnown,
        rows={"flights": one_unknown, "airports": AIRPORTS},
        level=AlertLevel.WARNING,  # 1 in 1001 is under 5%
    )
    assert outcome.failing_keys == ("SJU",)
    many_unknown = [*known[:10], *({"id": 2000 + i, "dest": "BQN"} for i in range(5))]
    assert_outcome(
        FlightDestinationsKnown,
        rows={"flights": many_unknown, "airports": AIRPORTS},
        level=AlertLevel.CRITICAL,
    )
