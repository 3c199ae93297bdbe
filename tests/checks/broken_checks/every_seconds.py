"""Every given seconds instead of a timedelta."""

from __future__ import annotations

from checkers import (
    PredicateSingleDatasetChecker,
)
from checks import QualityCheck
from scheduling.clocks import Every
from tests.checks.broken_checks import SOURCE


class EverySeconds(QualityCheck):
    parser = SOURCE
    clock = Every(3600)

    def checker(self, data):
        return PredicateSingleDatasetChecker(data, "true")
