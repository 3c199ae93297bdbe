"""KnownBroken given one string instead of a list of keys."""

from __future__ import annotations

from checkers import (
    KnownBroken,
    PredicateSingleDatasetChecker,
)
from checks import QualityCheck
from scheduling.clocks import Cron
from tests.checks.broken_checks import SOURCE


class KnownBrokenString(QualityCheck):
    clock = Cron("0 * * * *")
    parser = SOURCE
    tolerance = KnownBroken("N123")

    def checker(self, data):
        return PredicateSingleDatasetChecker(data, "true")
