"""Referential integrity: every flight lands at an airport the `airports` table knows. The real
data has gaps (Puerto Rico and the Virgin Islands are missing): the check reports the codes."""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from checkers import FailingShareThresholds, PredicateSingleDatasetChecker
from checks import QualityCheck
from checks.examples._demo import AIRPORTS, FLIGHTS
from scheduling.clocks import Cron


class FlightDestinationsKnown(QualityCheck):
    description = (
        "Every flight's destination exists in `airports`. Flights to unknown airports drop out "
        "of every report that joins on airports (routes, distances, time zones)."
    )
    owner = "analytics"
    tags = ("referential", "flights")
    clock = Cron("0 * * * *")
    alert_level = FailingShareThresholds(warning=0.001, error=0.05)
    parser = {"flights": FLIGHTS, "airports": AIRPORTS}  # noqa: RUF012

    def checker(self, data: dict[str, DataFrame]) -> PredicateSingleDatasetChecker:
        known = data["airports"].select(F.col("faa").alias("dest"), F.lit(True).alias("known"))
        flights = data["flights"].join(known.dropDuplicates(["dest"]), "dest", "left")
        return PredicateSingleDatasetChecker(flights, "known", key="dest")
