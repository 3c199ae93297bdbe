"""A row predicate over every flight in the lake, incremental: each run judges only the days that
are new or changed since the last run and adds their counts to the stored ones."""

from __future__ import annotations

from pyspark.sql import DataFrame

from checkers import FailingElementsThresholds, PredicateSingleDatasetChecker
from checks import QualityCheck
from checks.examples._demo import FLIGHTS
from checks.incremental import Incremental
from scheduling.clocks import Cron


def _minutes(hhmm: str) -> str:
    return f"(CAST({hhmm} AS INT) DIV 100 * 60 + CAST({hhmm} AS INT) % 100)"


def _matches(actual: str, scheduled: str, delay: str) -> str:
    """The delay is the actual minus the scheduled clock time, modulo a day (past midnight)."""
    late = f"{_minutes(actual)} - {_minutes(scheduled)} - {delay}"
    return f"({actual} IS NULL OR {delay} IS NULL OR pmod({late}, 1440) = 0)"


DELAYS_MATCH = (
    f"{_matches('dep_time', 'sched_dep_time', 'dep_delay')} "
    f"AND {_matches('arr_time', 'sched_arr_time', 'arr_delay')}"
)


class FlightDelaysMatchTimes(QualityCheck):
    description = (
        "Each flight's departure and arrival delays are its actual minus its scheduled times. "
        "A delay computed wrongly in the load skews every on-time report built on it."
    )
    owner = "analytics"
    tags = ("consistency", "flights")
    clock = Cron("0 * * * *")
    alert_level = FailingElementsThresholds(warning=1, error=100)
    parser = FLIGHTS
    incremental = Incremental()

    def checker(self, flights: DataFrame) -> PredicateSingleDatasetChecker:
        return PredicateSingleDatasetChecker(flights, DELAYS_MATCH, key="carrier")
