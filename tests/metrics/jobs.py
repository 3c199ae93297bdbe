"""Counting Spark jobs in tests, through the classic status tracker (tests only: library code
never touches the SparkContext). Adaptive execution is switched off while counting, so each
action is exactly one job and the count equals the number of passes over the data."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import TypeVar

from pyspark.sql import SparkSession

T = TypeVar("T")
_groups = itertools.count()


def count_jobs(spark: SparkSession, action: Callable[[], T]) -> tuple[T, int]:
    context = spark.sparkContext
    group = f"dq-test-{next(_groups)}"
    adaptive = spark.conf.get("spark.sql.adaptive.enabled")
    spark.conf.set("spark.sql.adaptive.enabled", "false")
    context.setJobGroup(group, group)
    try:
        result = action()
    finally:
        context.setLocalProperty("spark.jobGroup.id", None)  # type: ignore[arg-type]
        spark.conf.set("spark.sql.adaptive.enabled", adaptive or "true")
    return result, len(context.statusTracker().getJobIdsForGroup(group))
