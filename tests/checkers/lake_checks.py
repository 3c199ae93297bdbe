"""An incremental check on a Delta table in DQ_LAKE_DIR, for `dq run --full` over a table format."""

from __future__ import annotations

import os

from checkers import MetricChecker
from checkers.metrics import Check, CheckLevel
from checkers.parsers import DeltaParser
from checks import QualityCheck
from checks.incremental import Incremental
from scheduling.clocks import Cron


class LakeOrderTotals(QualityCheck):
    clock = Cron("0 * * * *")
    parser = DeltaParser(lambda: f"{os.environ['DQ_LAKE_DIR']}/orders")
    incremental = Incremental()

    def checker(self, orders):
        return MetricChecker(
            orders,
            [Check(CheckLevel.ERROR, "orders").has_completeness("note", lambda v: v > 0.5)],
        )
