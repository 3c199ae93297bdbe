"""A time zone that does not exist."""

from __future__ import annotations

from checkers import (
    PredicateSingleDatasetChecker,
)
from checks import QualityCheck
from scheduling.clocks import Cron
from tests.checks.broken_checks import SOURCE


class UnknownTimeZone(QualityCheck):
    parser = SOURCE
    clock = Cron("0 * * * *", tz="Mars/Olympus")

    def checker(self, data):
        return PredicateSingleDatasetChecker(data, "true")
