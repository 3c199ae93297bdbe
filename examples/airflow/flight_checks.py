"""The quality gate of the Airflow example: runs when the producer lands flights (asset
"producer/flights") and every morning; when it passes, `_SUCCESS` appears beside the data and
the dq_checks DAG emits "lake/flights", on which the consuming DAG is scheduled.

    DQ_CHECKS=examples.airflow.flight_checks dq run landed_flights_have_destinations
"""

from __future__ import annotations

from checkers import FailingElementsThresholds, LessThan, PredicateSingleDatasetChecker
from checkers.parsers import CsvParser
from checks import Guarded, QualityCheck
from examples.airflow.lake import LANDED, PASSED, flights_dir
from scheduling.clocks import Cron


class LandedFlightsHaveDestinations(QualityCheck):
    description = "A flight without a destination breaks the routing report downstream."
    owner = "flights"
    parser = CsvParser(lambda: str(flights_dir()), schema="flight int, origin string, dest string")
    clock = Cron("0 6 * * *")  # a daily run besides the producer's events
    after = (LANDED,)
    guards = Guarded(PASSED)  # marker: <lake>/flights/_SUCCESS
    tolerance = LessThan(2)
    alert_level = FailingElementsThresholds(warning=2, error=10)

    def checker(self, flights):
        return PredicateSingleDatasetChecker(flights, "dest IS NOT NULL", key="flight")
