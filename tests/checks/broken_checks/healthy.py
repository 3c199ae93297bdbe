"""Good checks: they run and record whatever their neighbours do."""

from __future__ import annotations

from checkers import KnownBroken, PredicateSingleDatasetChecker
from checks import QualityCheck
from scheduling.clocks import Cron
from tests.checks.broken_checks import SOURCE


class GoodAmounts(QualityCheck):
    clock = Cron("0 * * * *")
    parser = SOURCE
    owner = "team-good"

    def checker(self, data):
        return PredicateSingleDatasetChecker(data, "amount >= 0")


class GoodDottedKey(QualityCheck):
    """Fails on k3: its failing key is read from the column literally named `a.b`."""

    clock = Cron("0 * * * *")
    parser = SOURCE

    def checker(self, data):
        return PredicateSingleDatasetChecker(data, "amount < 100", key="a.b")


class GoodKnownBrokenDottedKey(QualityCheck):
    """k3 is excused through the dotted key column: TOLERATED."""

    clock = Cron("0 * * * *")
    parser = SOURCE
    tolerance = KnownBroken(["k3"], columns=("a.b",))

    def checker(self, data):
        return PredicateSingleDatasetChecker(data, "amount < 100")
