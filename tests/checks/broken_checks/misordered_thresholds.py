"""Thresholds in the wrong order."""

from __future__ import annotations

from checkers import (
    FailingElementsThresholds,
    PredicateSingleDatasetChecker,
)
from checks import QualityCheck
from scheduling.clocks import Cron
from tests.checks.broken_checks import SOURCE


class MisorderedThresholds(QualityCheck):
    clock = Cron("0 * * * *")
    parser = SOURCE
    alert_level = FailingElementsThresholds(warning=100, error=10)

    def checker(self, data):
        return PredicateSingleDatasetChecker(data, "true")
