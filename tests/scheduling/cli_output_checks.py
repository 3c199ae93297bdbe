"""Ten hourly checks for the CLI output tests, over files in DQ_CLI_OUTPUT_DIR (`write_data`): a
Parquet file of 16 flights and a CSV of 4 numbers (shared reads), and a malformed CSV. Some pass,
one is tolerated, four fail at WARNING, ERROR and CRITICAL, one could not run."""

from __future__ import annotations

import os
from pathlib import Path

from checkers import FailingElementsThresholds, FixedLevel, LessThan
from checkers import PredicateSingleDatasetChecker as Rows
from checkers.levels import AlertLevel
from checkers.parsers import CsvParser, ParquetParser
from checks import QualityCheck
from scheduling.clocks import Cron

HOURLY = Cron("0 * * * *")
FLIGHTS = ParquetParser(lambda: f"{os.environ['DQ_CLI_OUTPUT_DIR']}/flights.parquet")
NUMBERS = CsvParser(
    lambda: f"{os.environ['DQ_CLI_OUTPUT_DIR']}/numbers.csv", schema="n int, label string"
)
MALFORMED = CsvParser(lambda: f"{os.environ['DQ_CLI_OUTPUT_DIR']}/malformed.csv", schema="n int")


def write_data(directory: Path) -> None:
    """16 flights: 2 without a destination, 2 without a departure time, 3 too long, 1 with a
    zero distance; 4 numbers, one without a label; a CSV whose second row is not a number."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    ids = list(range(1, 17))
    pq.write_table(
        pa.table(
            {
                "id": ids,
                "dest": [None if i in (3, 7) else "ORD" for i in ids],
                "dep_time": [None if i in (5, 9) else 600 + i for i in ids],
                "distance": [0.0 if i == 2 else 4000.0 if i > 13 else 700.0 for i in ids],
                "carrier": ["AA" if i % 2 else "UA" for i in ids],
            }
        ),
        directory / "flights.parquet",
    )
    (directory / "numbers.csv").write_text("n,label\n1,a\n2,b\n3,\n4,d\n")
    (directory / "malformed.csv").write_text("n\n1\nnot-a-number\n")


class OutFlightIds(QualityCheck):
    clock, parser = HOURLY, FLIGHTS

    def checker(self, flights):
        return Rows(flights, "id > 0")


class OutCarriersKnown(QualityCheck):
    clock, parser = HOURLY, FLIGHTS

    def checker(self, flights):
        return Rows(flights, "carrier IN ('AA', 'UA', 'DL')")


class OutDistancePositive(QualityCheck):
    clock, parser = HOURLY, FLIGHTS
    tolerance = LessThan(2)

    def checker(self, flights):
        return Rows(flights, "distance > 0")


class OutDestPresent(QualityCheck):
    clock, parser = HOURLY, FLIGHTS
    alert_level = FixedLevel(AlertLevel.WARNING)

    def checker(self, flights):
        return Rows(flights, "dest IS NOT NULL")


class OutDepartureTimes(QualityCheck):
    clock, parser = HOURLY, FLIGHTS

    def checker(self, flights):
        return Rows(flights, "dep_time IS NOT NULL")


class OutDistanceShort(QualityCheck):
    clock, parser = HOURLY, FLIGHTS
    alert_level = FixedLevel(AlertLevel.CRITICAL)

    def checker(self, flights):
        return Rows(flights, "distance < 3000")


class OutNumbersPositive(QualityCheck):
    clock, parser = HOURLY, NUMBERS

    def checker(self, numbers):
        return Rows(numbers, "n > 0")


class OutNumbersSmall(QualityCheck):
    clock, parser = HOURLY, NUMBERS

    def checker(self, numbers):
        return Rows(numbers, "n < 100")


class OutLabelsPresent(QualityCheck):
    clock, parser = HOURLY, NUMBERS
    alert_level = FailingElementsThresholds(warning=1, error=5)

    def checker(self, numbers):
        return Rows(numbers, "label IS NOT NULL", key="n")


class OutMalformedNumbers(QualityCheck):
    clock, parser = HOURLY, MALFORMED

    def checker(self, numbers):
        return Rows(numbers, "n > 0")
