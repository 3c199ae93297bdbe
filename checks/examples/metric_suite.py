"""A metric suite on flights: completeness, ranges, and uniqueness of a flight's identity,
computed in one engine run. Incremental: each run reads only the lake's new days and merges the
stored states of the others (uniqueness from per-day frequency tables, the median from sketches)."""

from __future__ import annotations

from pyspark.sql import DataFrame

from checkers import FailingElementsThresholds, MetricChecker, MetricConstraint
from checkers.metrics import (
    ApproxQuantile,
    Completeness,
    Compliance,
    Maximum,
    Minimum,
    Size,
    Uniqueness,
)
from checks import QualityCheck
from checks.examples._demo import FLIGHTS
from checks.incremental import Incremental
from scheduling.clocks import Cron

IDENTITY = ("year", "month", "day", "carrier", "flight", "origin", "sched_dep_time")

CONSTRAINTS = (
    MetricConstraint(Size(), lambda n: n > 0, "flights were loaded"),
    MetricConstraint(Completeness("carrier"), lambda v: v == 1.0, "every flight has a carrier"),
    MetricConstraint(Completeness("dep_time"), lambda v: v >= 0.97, "at most 3% cancelled"),
    MetricConstraint(Minimum("dep_delay"), lambda v: v >= -60, "no departure an hour early"),
    MetricConstraint(Maximum("dep_delay"), lambda v: v <= 24 * 60, "no delay over a day"),
    MetricConstraint(Uniqueness(("id",)), lambda v: v == 1.0, "ids are unique"),
    MetricConstraint(Uniqueness(IDENTITY), lambda v: v == 1.0, "one row per scheduled flight"),
    MetricConstraint(
        Compliance("positive distance", "distance > 0", predicate_columns=("distance",)),
        lambda v: v == 1.0,
        "distances are positive",
    ),
    MetricConstraint(ApproxQuantile("arr_delay", 0.5), lambda v: -30 <= v <= 30, "median delay"),
)


class FlightsMetricSuite(QualityCheck):
    description = (
        "Flights are complete, in range and unique per scheduled flight. Broken loads show up "
        "here first: duplicates double-count revenue, gaps hide cancellations."
    )
    owner = "analytics"
    tags = ("metrics", "flights")
    clock = Cron("0 * * * *")
    alert_level = FailingElementsThresholds(warning=1, error=2)
    parser = FLIGHTS
    incremental = Incremental()

    def checker(self, flights: DataFrame) -> MetricChecker:
        return MetricChecker(flights, CONSTRAINTS)
