"""The example checks that are incremental, on the example warehouse: the first run reads every
day of the lake, a run with nothing new reads nothing, and both give the outcome of a
recomputation from scratch."""

from __future__ import annotations

import pandas as pd

from checks.examples import FlightDelaysMatchTimes, FlightsMetricSuite
from scheduling.drift import differences
from scheduling.tick.evaluate import evaluate_checks
from tests.checks.examples.conftest import NOW
from tests.incremental_helpers import partition_store

CHECKS = [FlightsMetricSuite, FlightDelaysMatchTimes]


def test_incremental_examples_read_each_day_once(spark, warehouse, tmp_path):
    store = partition_store(tmp_path)
    flights = len(pd.read_parquet(warehouse.root / "lake" / "flights"))
    scratch = evaluate_checks(CHECKS, spark=spark, now=NOW, full=True)
    first = evaluate_checks(CHECKS, spark=spark, now=NOW, partitions=store)
    again = evaluate_checks(CHECKS, spark=spark, now=NOW, partitions=store)
    for full, one, two in zip(scratch, first, again, strict=True):
        assert full.error is None, full.error
        assert differences(one, full) == [] and differences(two, full) == [], one.check
        assert one.reading == {"rows_read": flights, "partitions_read": 3, "partitions": 3}
        assert two.reading == {"rows_read": 0, "partitions_read": 0, "partitions": 3}
