"""A share written as a percentage (5 for 5%)."""

from __future__ import annotations

from checkers import (
    PredicateSingleDatasetChecker,
    ShareAtMost,
)
from checks import QualityCheck
from scheduling.clocks import Cron
from tests.checks.broken_checks import SOURCE


class ShareAsPercent(QualityCheck):
    clock = Cron("0 * * * *")
    parser = SOURCE
    tolerance = ShareAtMost(5)

    def checker(self, data):
        return PredicateSingleDatasetChecker(data, "true")
