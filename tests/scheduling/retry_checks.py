"""Checks for the in-process retry of ERROR outcomes: one over a column its source lacks (its
definition decides) and one over a missing file."""

from __future__ import annotations

import os

from checkers import PredicateSingleDatasetChecker
from checkers.parsers import CsvParser
from checks import QualityCheck
from scheduling.clocks import Cron

HOURLY = Cron("0 * * * *")


class RetryNoSuchColumn(QualityCheck):
    clock = HOURLY
    parser = CsvParser(lambda: os.environ["DQ_RETRY_CSV"], schema="n int")

    def checker(self, data):
        return PredicateSingleDatasetChecker(data, "no_such_column > 0")


class RetryMissingFile(QualityCheck):
    clock = HOURLY
    parser = CsvParser(lambda: os.environ["DQ_RETRY_CSV"] + ".missing", schema="n int")

    def checker(self, data):
        return PredicateSingleDatasetChecker(data, "n > 0")
