"""Checks for the CLI tests: two hourly checks on one CSV source, one daily."""

from __future__ import annotations

import os

from checkers import PredicateSingleDatasetChecker
from checkers.parsers import CsvParser
from checks import QualityCheck
from scheduling.clocks import Cron

SOURCE = CsvParser(lambda: os.environ["DQ_CLI_CSV"], schema="n int, label string")


class CliPositive(QualityCheck):
    clock = Cron("0 * * * *")
    parser = SOURCE

    def checker(self, data):
        return PredicateSingleDatasetChecker(data, "n > 0")


class CliLabelled(QualityCheck):
    clock = Cron("0 * * * *")
    parser = SOURCE

    def checker(self, data):
        return PredicateSingleDatasetChecker(data, "label IS NOT NULL", key="n")


class CliDaily(QualityCheck):
    clock = Cron("0 6 * * *")
    parser = SOURCE

    def checker(self, data):
        return PredicateSingleDatasetChecker(data, "n < 10")
