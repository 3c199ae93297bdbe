"""An invalid cron expression stops this module in `BadCron`'s body: the check before it is
kept, the problem is named after `BadCron`, and `AfterBadCron` (never defined) is an ERROR too."""

from __future__ import annotations

from checkers import PredicateSingleDatasetChecker
from checks import QualityCheck
from scheduling.clocks import Cron
from tests.checks.broken_checks import SOURCE


class BeforeBadCron(QualityCheck):
    clock = Cron("0 * * * *")
    parser = SOURCE

    def checker(self, data):
        return PredicateSingleDatasetChecker(data, "true")


class BadCron(QualityCheck):
    owner = "team-cron"
    clock = Cron("every hour")
    parser = SOURCE

    def checker(self, data):
        return PredicateSingleDatasetChecker(data, "true")


class AfterBadCron(QualityCheck):
    clock = Cron("0 * * * *")
    parser = SOURCE

    def checker(self, data):
        return PredicateSingleDatasetChecker(data, "true")
