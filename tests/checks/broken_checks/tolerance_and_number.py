"""A tolerance combined with a number."""

from __future__ import annotations

from checkers import (
    LessThan,
    PredicateSingleDatasetChecker,
)
from checks import QualityCheck
from scheduling.clocks import Cron
from tests.checks.broken_checks import SOURCE


class ToleranceAndNumber(QualityCheck):
    clock = Cron("0 * * * *")
    parser = SOURCE
    tolerance = LessThan(3) & 5

    def checker(self, data):
        return PredicateSingleDatasetChecker(data, "true")
