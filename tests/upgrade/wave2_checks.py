"""The checks of the wave-2 deployment whose database tests/upgrade/wave2/ holds. Do not edit this
module: an incremental check's stored states are keyed to a digest of its module's source, so
any change here makes the next run read every partition again, whatever the code under test does.

The source is the view `wave2_orders` over wave2/orders.csv, partitioned by its `day` column."""

from __future__ import annotations

import datetime as dt
import os

from checkers import AlertLevel, FixedLevel, MetricChecker, PredicateSingleDatasetChecker
from checkers.metrics import Check, CheckLevel, MetricHistory, MetricsRepository, ResultKey
from checkers.parsers import PartitionColumn, TableParser
from checks import QualityCheck
from checks.incremental import Incremental
from scheduling.clocks import Cron

VIEW = "wave2_orders"
SCHEMA = "order_id int, day string, amount double, updated_at timestamp"
ORDERS = TableParser(VIEW, partitioning=PartitionColumn("day", changed="updated_at"))
SERIES = {"series": "wave2_orders"}


class OrdersHaveAmounts(QualityCheck, register=False):
    """Incremental and failing: its incident is open, its notifications pending."""

    name = "wave2_orders_have_amounts"
    description = "Every order has a positive amount."
    clock = Cron("0 6 * * *")
    alert_level = FixedLevel(AlertLevel.ERROR)
    parser = ORDERS
    incremental = Incremental()

    def checker(self, orders):
        return PredicateSingleDatasetChecker(orders, "amount > 0", key="order_id")


class OrdersVolume(QualityCheck, register=False):
    """Saves its metrics in the project database's metrics repository (as checks/examples do)."""

    name = "wave2_orders_volume"
    description = "Orders arrive."
    clock = Cron("0 6 * * *")
    alert_level = FixedLevel(AlertLevel.WARNING)
    parser = ORDERS

    def checker(self, orders):
        key = ResultKey(self.now.astimezone(dt.UTC), SERIES)
        history = MetricHistory(MetricsRepository(os.environ["DQ_DATABASE_URL"]), key, VIEW)
        volume = Check(CheckLevel.WARNING, "volume").has_size(lambda n: n > 0)
        return MetricChecker(orders, [volume], history=history)


CHECKS = [OrdersHaveAmounts, OrdersVolume]
