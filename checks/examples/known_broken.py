"""Known broken keys: every flight's plane is in `planes`, except for carriers known to report
fleet numbers instead of tail numbers (American and Envoy): those are tolerated, new gaps alert."""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from checkers import FailingElementsThresholds, KnownBroken, PredicateSingleDatasetChecker
from checks import QualityCheck
from checks.examples._demo import FLIGHTS, PLANES
from scheduling.clocks import Cron


class FlightPlanesKnown(QualityCheck):
    description = (
        "Every flight's tail number is in `planes`, so fleet reports (age, seats, engines) cover "
        "it. AA and MQ report fleet numbers: known and tolerated; any other carrier is new."
    )
    owner = "fleet"
    tags = ("referential", "known-broken")
    clock = Cron("15 * * * *")
    tolerance = KnownBroken(["AA", "MQ"], columns="carrier")
    alert_level = FailingElementsThresholds(warning=100, error=1000)
    parser = {"flights": FLIGHTS, "planes": PLANES}  # noqa: RUF012

    def checker(self, data: dict[str, DataFrame]) -> PredicateSingleDatasetChecker:
        planes = data["planes"].select("tailnum", F.lit(True).alias("known"))
        flights = data["flights"].join(planes.dropDuplicates(["tailnum"]), "tailnum", "left")
        # No tail number means no plane was assigned (cancelled): nothing to look up.
        return PredicateSingleDatasetChecker(flights, "tailnum IS NULL OR known", key="tailnum")
