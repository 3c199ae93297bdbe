"""Cross-store consistency: the operational database and the Parquet lake hold the same flights.
Row by row for yesterday (checksums of key ranges inside each engine: only the rows of ranges
that differ leave the database), and by daily aggregates for the whole history (one row per day
crosses over)."""

from __future__ import annotations

import datetime as dt

from pyspark.sql import DataFrame

from checkers import (
    AggregateComparisonChecker,
    ConsistencyChecker,
    FailingElementsThresholds,
    SqlTable,
)
from checkers.parsers import SqlQueryParser
from checks import QualityCheck
from checks.examples._demo import FLIGHTS, demo_database_url
from scheduling.clocks import Cron

COMPARED = ("id", "carrier", "flight", "tailnum", "dep_delay", "arr_delay")


class OpsAndLakeFlightsMatch(QualityCheck):
    description = (
        "Yesterday's flights are identical in the operational database and the lake. A missing "
        "or different row means the export lost or corrupted data that reports are built on."
    )
    owner = "data-platform"
    tags = ("consistency", "flights")
    clock = Cron("0 6 * * *")
    alert_level = FailingElementsThresholds(warning=5, error=100)

    def day(self) -> dt.date:
        return (self.now - dt.timedelta(days=1)).date()

    parser = FLIGHTS

    def checker(self, flights: DataFrame) -> ConsistencyChecker:
        day = self.day()
        on_day = f"year = {day.year} AND month = {day.month} AND day = {day.day}"
        return ConsistencyChecker(
            SqlTable(demo_database_url, "flights", where=on_day),
            flights.where(on_day).select(*COMPARED),
            key="id",
            columns=COMPARED[1:],
        )


class OpsAndLakeDailyTotals(QualityCheck):
    description = (
        "Per day, the lake has as many flights, departures and minutes of delay as the "
        "operational database. Catches lost partitions over the whole history cheaply."
    )
    owner = "data-platform"
    tags = ("consistency", "flights")
    clock = Cron("0 7 * * *")
    alert_level = FailingElementsThresholds(warning=1, error=3)
    parser = {  # noqa: RUF012
        "ops": SqlQueryParser(
            demo_database_url,
            "SELECT month, day, count(*) AS flights, count(dep_time) AS departed, "
            "sum(dep_delay) AS dep_delay FROM flights GROUP BY month, day",
            schema="month int, day int, flights long, departed long, dep_delay double",
        ),
        "lake": FLIGHTS,
    }

    def checker(self, data: dict[str, DataFrame]) -> AggregateComparisonChecker:
        return AggregateComparisonChecker(
            data["ops"],
            data["lake"],
            by=["month", "day"],
            aggregates={
                "flights": "sum(flights)",
                "departed": "sum(departed)",
                "dep_delay": "sum(dep_delay)",
            },
            right_aggregates={
                "flights": "count(*)",
                "departed": "count(dep_time)",
                "dep_delay": "sum(dep_delay)",
            },
            relative=1e-9,  # sums of doubles in two engines differ in the last bits
        )
