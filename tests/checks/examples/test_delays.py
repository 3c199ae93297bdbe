from __future__ import annotations

import pandas as pd

from checkers import AlertLevel, Status
from checks.examples import FlightDelaysMatchTimes
from checks.testing import assert_outcome, evaluate_check
from tests.checks.examples.conftest import NOW

Times = tuple[float | None, int, float | None]  # actual (HHMM), scheduled (HHMM), delay (min)


def flight(carrier: str, dep: Times, arr: Times) -> dict[str, object]:
    (dep_time, sched_dep, dep_delay), (arr_time, sched_arr, arr_delay) = dep, arr
    return {
        "carrier": carrier,
        "dep_time": dep_time,
        "sched_dep_time": sched_dep,
        "dep_delay": dep_delay,
        "arr_time": arr_time,
        "sched_arr_time": sched_arr,
        "arr_delay": arr_delay,
    }


def test_delays_are_actual_minus_scheduled_times(spark):
    on_time = flight("UA", (600.0, 600, 0.0), (845.0, 850, -5.0))
    past_midnight = flight("B6", (5.0, 2355, 10.0), (210.0, 140, 30.0))
    cancelled = flight("AA", (None, 700, None), (None, 900, None))
    diverted = flight("DL", (701.0, 700, 1.0), (1200.0, 900, None))
    good = [on_time, past_midnight, cancelled, diverted]
    assert_outcome(FlightDelaysMatchTimes, rows=good, status=Status.PASSED)
    wrong = flight("EV", (730.0, 700, 20.0), (900.0, 900, 0.0))  # 30 minutes late, says 20
    late_arrival = flight("EV", (700.0, 700, 0.0), (1000.0, 900, 6.0))
    outcome = assert_outcome(
        FlightDelaysMatchTimes, rows=[*good, wrong, late_arrival], level=AlertLevel.ERROR
    )
    assert (outcome.failing, outcome.total, outcome.failing_keys) == (2, 6, ("EV",))


def test_real_delays_match_their_times(spark, warehouse):
    outcome = evaluate_check(FlightDelaysMatchTimes, spark=spark, now=NOW)
    flights = pd.read_parquet(warehouse.root / "lake" / "flights")
    assert (outcome.status, outcome.total) == (Status.PASSED, len(flights))
