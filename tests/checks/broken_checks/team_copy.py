"""A copy of a healthy check that kept its name: the second definition is the problem."""

from __future__ import annotations

from checkers import PredicateSingleDatasetChecker
from checks import QualityCheck
from scheduling.clocks import Cron
from tests.checks.broken_checks import SOURCE


class CopiedAmounts(QualityCheck):
    name = "good_amounts"
    clock = Cron("0 * * * *")
    parser = SOURCE

    def checker(self, data):
        return PredicateSingleDatasetChecker(data, "amount > 0")
