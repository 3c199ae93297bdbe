"""An anomaly check on a metric's history: yesterday's number of scheduled flights compared with
the same weekday in the previous weeks (the metrics repository lives in the project database)."""

from __future__ import annotations

import datetime as dt

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from checkers import AlertLevel, FixedLevel, MetricChecker
from checkers.metrics import (
    Check,
    CheckLevel,
    MetricHistory,
    MetricsRepository,
    ResultKey,
    Seasonal,
    Size,
)
from checkers.project_db import database_url
from checks import QualityCheck
from checks.examples._demo import FLIGHTS
from scheduling.clocks import Cron

#: Tags that identify this series in the metrics repository.
SERIES = {"series": "daily_flights"}


def day_key(day: dt.date) -> ResultKey:
    return ResultKey(dt.datetime.combine(day, dt.time(), dt.UTC), SERIES)


class FlightsDailyVolume(QualityCheck):
    description = (
        "Yesterday's number of scheduled flights is in line with the same weekday in recent "
        "weeks. A sudden drop means a lost feed or a partial load; a jump, duplicates."
    )
    owner = "analytics"
    tags = ("anomaly", "flights")
    clock = Cron("0 6 * * *")
    alert_level = FixedLevel(AlertLevel.WARNING)
    parser = FLIGHTS
    inhibits = True  # a lost or partial day explains the other failures over the flights

    def checker(self, flights: DataFrame) -> MetricChecker:
        day = (self.now - dt.timedelta(days=1)).date()
        yesterday = flights.where(
            (F.col("year") == day.year) & (F.col("month") == day.month) & (F.col("day") == day.day)
        )
        volume = Check(CheckLevel.WARNING, "daily volume").has_no_anomalies(
            Size(), Seasonal(period=7), tags=SERIES
        )
        history = MetricHistory(MetricsRepository(database_url()), day_key(day), "flights")
        return MetricChecker(yesterday, [volume], history=history)
