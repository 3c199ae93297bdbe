"""Two checks for the DAG test: one fires every 15 minutes (and fails), one only at 03:00."""

from __future__ import annotations

import os

from checkers import PredicateSingleDatasetChecker
from checkers.parsers import CsvParser
from checks import QualityCheck
from scheduling.clocks import Cron

NUMBERS = CsvParser(lambda: os.environ["DQ_FIXTURE_CSV"], schema="n int")


class EveryQuarterPositive(QualityCheck):
    description = "Numbers are positive."
    clock = Cron("*/15 * * * *")
    parser = NUMBERS

    def checker(self, data):
        return PredicateSingleDatasetChecker(data, "n > 0", key="n")


class NightlySmall(QualityCheck):
    description = "Numbers are small."
    clock = Cron("0 3 * * *")
    parser = NUMBERS

    def checker(self, data):
        return PredicateSingleDatasetChecker(data, "n < 100")
