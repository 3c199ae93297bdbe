"""The check of the overlapping-runs test: hourly, on a tiny CSV, failing at CRITICAL so that
Slack, email and PagerDuty all hear it."""

from __future__ import annotations

import os

from checkers import AlertLevel, FixedLevel, PredicateSingleDatasetChecker
from checkers.parsers import CsvParser
from checks import QualityCheck
from scheduling.clocks import Cron


class OverlapOrders(QualityCheck):
    clock = Cron("0 * * * *")
    parser = CsvParser(lambda: os.environ["DQ_OVERLAP_CSV"], schema="order_id int, customer int")
    description = "Orders reference a customer."
    alert_level = FixedLevel(AlertLevel.CRITICAL)

    def checker(self, data):
        return PredicateSingleDatasetChecker(data, "customer IS NOT NULL", key="order_id")
