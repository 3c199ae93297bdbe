"""Freshness/SLA: each operational table received rows within its target lag (Drivy's example:
the query runs in the operational database through the SQL parser)."""

from __future__ import annotations

import datetime as dt

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from checkers import FailingElementsThresholds, PredicateSingleDatasetChecker
from checkers.parsers import SqlQueryParser
from checks import QualityCheck
from checks.examples._demo import demo_database_url
from scheduling.clocks import Cron

#: How far behind each table may be; a table missing here is always stale.
TARGET_LAGS = {"flights": dt.timedelta(hours=6), "weather": dt.timedelta(hours=3)}


class OperationalTablesFresh(QualityCheck):
    description = (
        "Each operational table received rows within its target lag. A stale table means an "
        "ingestion job stopped: dashboards and downstream checks silently show old numbers."
    )
    owner = "data-platform"
    tags = ("freshness", "ops-db")
    clock = Cron("*/15 * * * *")
    inhibits = True  # a stale table explains the other failures over its query
    parser = SqlQueryParser(
        demo_database_url,
        "SELECT 'flights' AS table_name, max(ingested_at) AS latest FROM flights "
        "UNION ALL SELECT 'weather', max(ingested_at) FROM weather",
        schema="table_name string, latest timestamp",
    )
    alert_level = FailingElementsThresholds(warning=0, error=1)  # one stale: ERROR, more: CRITICAL

    def checker(self, data: DataFrame) -> PredicateSingleDatasetChecker:
        deadline = F.lit(None).cast("timestamp")
        for table, lag in TARGET_LAGS.items():
            deadline = F.when(F.col("table_name") == table, F.lit(self.now - lag)).otherwise(
                deadline
            )
        return PredicateSingleDatasetChecker(data, F.col("latest") >= deadline, key="table_name")
