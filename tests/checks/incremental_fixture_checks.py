"""An incremental check over the Hive-partitioned lake at $DQ_INC_LAKE (CLI and drift tests)."""

from __future__ import annotations

import os

from checkers import PredicateSingleDatasetChecker
from checkers.parsers import HivePartitions, ParquetParser
from checks import QualityCheck
from checks.incremental import Incremental


class IncDelays(QualityCheck):
    name = "inc_delays"
    parser = ParquetParser(lambda: os.environ["DQ_INC_LAKE"], partitioning=HivePartitions())
    incremental = Incremental()

    def checker(self, flights):
        return PredicateSingleDatasetChecker(flights, "dep_delay IS NULL OR dep_delay < 120")
