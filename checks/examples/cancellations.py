"""Yesterday's flights have times: a flight without departure or arrival time was cancelled (or
its times were lost). The real December 2013 has storm days where this fails."""

from __future__ import annotations

import datetime as dt

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from checkers import FailingShareThresholds, PredicateSingleDatasetChecker, ShareAtMost
from checks import QualityCheck
from checks.examples._demo import FLIGHTS
from scheduling.clocks import Cron


class YesterdaysFlightsHaveTimes(QualityCheck):
    description = (
        "Yesterday's flights have departure and arrival times. Flights without them were "
        "cancelled or lost their times: on-time and delay reports silently leave them out."
    )
    owner = "operations"
    tags = ("completeness", "flights")
    clock = Cron("0 6 * * *")
    tolerance = ShareAtMost(0.03)  # a few cancellations a day are normal
    alert_level = FailingShareThresholds(warning=0.05, error=0.15)
    parser = FLIGHTS

    def checker(self, flights: DataFrame) -> PredicateSingleDatasetChecker:
        day = (self.now - dt.timedelta(days=1)).date()
        yesterday = flights.where(
            (F.col("year") == day.year) & (F.col("month") == day.month) & (F.col("day") == day.day)
        )
        return PredicateSingleDatasetChecker(
            yesterday, "dep_time IS NOT NULL AND arr_time IS NOT NULL", key="carrier"
        )
