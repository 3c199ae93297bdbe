"""Offset predicate: a plane's consecutive flights, in departure order, do not overlap (the next
departure is after the previous landing)."""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from checkers import FailingElementsThresholds, LessThan, OffsetPredicateSingleDatasetChecker
from checks import QualityCheck
from checks.examples._demo import FLIGHTS
from scheduling.clocks import Cron

# Scheduled departure is New York local time; the actual one adds the delay; landing adds air time.
DEPARTURE = (
    "to_utc_timestamp(make_timestamp(CAST(year AS INT), month, day, "
    "CAST(sched_dep_time DIV 100 AS INT), CAST(sched_dep_time % 100 AS INT), 0), "
    "'America/New_York') + make_interval(0, 0, 0, 0, 0, CAST(dep_delay AS INT), 0)"
)
LANDING = "departed + make_interval(0, 0, 0, 0, 0, CAST(air_time AS INT), 0)"


class PlaneLegsDoNotOverlap(QualityCheck):
    description = (
        "A plane's next flight departs after its previous flight landed. An overlap means a "
        "wrong tail number or wrong times, which breaks fleet utilisation and delay attribution."
    )
    owner = "operations"
    tags = ("offset", "flights")
    clock = Cron("30 6 * * *")
    tolerance = LessThan(10)  # a handful of clock and tail-number typos are expected
    alert_level = FailingElementsThresholds(warning=50, error=500)
    parser = FLIGHTS

    def checker(self, flights: DataFrame) -> OffsetPredicateSingleDatasetChecker:
        flown = (
            flights.where("tailnum IS NOT NULL AND dep_delay IS NOT NULL AND air_time IS NOT NULL")
            .withColumn("departed", F.expr(DEPARTURE))
            .withColumn("landed", F.expr(LANDING))
            .select("id", "tailnum", "carrier", "flight", "origin", "dest", "departed", "landed")
        )
        return OffsetPredicateSingleDatasetChecker(
            flown,
            "previous.landed <= current.departed",
            order_by=["departed", "id"],
            partition_by=["tailnum"],
        )
