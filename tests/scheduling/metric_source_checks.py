"""One metric check over a Parquet file in DQ_METRIC_SOURCE_DIR, for the tests of where metrics
come from: its size and completeness are in the file's footer, its mean is not; and one check
the footer answers whole."""

from __future__ import annotations

import os

from checkers import MetricChecker, MetricConstraint
from checkers.metrics import Completeness, Mean, MetricHistory, MetricsRepository, ResultKey, Size
from checkers.parsers import ParquetParser
from checkers.project_db import database_url
from checks import QualityCheck
from scheduling.clocks import Cron

ORDERS = ParquetParser(lambda: f"{os.environ['DQ_METRIC_SOURCE_DIR']}/orders.parquet")


class OrdersFromFooters(QualityCheck):
    clock, parser = Cron("0 * * * *"), ORDERS

    def checker(self, orders):
        history = MetricHistory(MetricsRepository(database_url()), ResultKey(self.now), "orders")
        return MetricChecker(
            orders,
            [
                MetricConstraint(Size(), lambda n: n == 6, "six orders"),
                MetricConstraint(Completeness("note"), lambda v: v >= 0.5, "notes mostly set"),
                MetricConstraint(Mean("qty"), lambda v: v > 0, "positive quantities"),
            ],
            history=history,
        )


class OrdersCounted(QualityCheck):
    clock, parser = Cron("0 * * * *"), ORDERS

    def checker(self, orders):
        return MetricChecker(orders, [MetricConstraint(Size(), lambda n: n == 6, "six orders")])
