"""Checks for the tick tests: three checks on one CSV source; two read it through the same
filter, each building its own DataFrame for it."""

from __future__ import annotations

import os

from checkers import PredicateSingleDatasetChecker
from checkers.parsers import CsvParser
from checks import QualityCheck
from scheduling.clocks import Cron

SOURCE = CsvParser(lambda: os.environ["DQ_TICK_CSV"], schema="n int, label string")


class TickRaw(QualityCheck):
    clock = Cron("0 * * * *")
    parser = SOURCE

    def checker(self, data):
        return PredicateSingleDatasetChecker(data, "n > 0")


class TickLabelledAboveOne(QualityCheck):
    clock = Cron("0 * * * *")
    parser = SOURCE

    def checker(self, data):
        return PredicateSingleDatasetChecker(data.filter("n > 1"), "label IS NOT NULL")


class TickSmallAboveOne(QualityCheck):
    clock = Cron("0 * * * *")
    parser = SOURCE

    def checker(self, data):
        return PredicateSingleDatasetChecker(data.filter("n > 1"), "n < 10")
