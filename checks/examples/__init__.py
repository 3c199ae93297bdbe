"""Example checks on the demo warehouse (`python -m examples.warehouse` builds it): one of each
kind a team writes. Importing this package registers them."""

from checks.examples.cancellations import YesterdaysFlightsHaveTimes
from checks.examples.consistency import OpsAndLakeDailyTotals, OpsAndLakeFlightsMatch
from checks.examples.delays import FlightDelaysMatchTimes
from checks.examples.freshness import OperationalTablesFresh
from checks.examples.known_broken import FlightPlanesKnown
from checks.examples.metric_suite import FlightsMetricSuite
from checks.examples.offset import PlaneLegsDoNotOverlap
from checks.examples.referential import FlightDestinationsKnown
from checks.examples.volume import FlightsDailyVolume

__all__ = [
    "FlightDelaysMatchTimes",
    "FlightDestinationsKnown",
    "FlightPlanesKnown",
    "FlightsDailyVolume",
    "FlightsMetricSuite",
    "OperationalTablesFresh",
    "OpsAndLakeDailyTotals",
    "OpsAndLakeFlightsMatch",
    "PlaneLegsDoNotOverlap",
    "YesterdaysFlightsHaveTimes",
]
