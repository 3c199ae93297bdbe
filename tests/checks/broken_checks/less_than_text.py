"""A count given as text."""

from __future__ import annotations

from checkers import (
    LessThan,
    PredicateSingleDatasetChecker,
)
from checks import QualityCheck
from scheduling.clocks import Cron
from tests.checks.broken_checks import SOURCE


class LessThanText(QualityCheck):
    clock = Cron("0 * * * *")
    parser = SOURCE
    tolerance = LessThan("3")

    def checker(self, data):
        return PredicateSingleDatasetChecker(data, "true")
