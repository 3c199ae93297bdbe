"""The benchmarks' Spark session, timing and job counting (classic Spark: jobs come from the status
tracker)."""

from __future__ import annotations

import itertools
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass

from pyspark.sql import SparkSession

from checkers.spark import spark_session

_groups = itertools.count()


def benchmark_session() -> SparkSession:
    """local[2] with an 8 GiB driver and 8 shuffle partitions, as every TPC-H table was measured."""
    return spark_session(
        app_name="dq-benchmarks",
        config={
            "spark.driver.memory": "8g",
            "spark.sql.shuffle.partitions": "8",
            "spark.ui.showConsoleProgress": "false",
        },
    )


@dataclass
class Measurement:
    label: str
    seconds: list[float]
    jobs: int
    actions: int | None = None

    @property
    def median(self) -> float:
        return statistics.median(self.seconds)


def timed(spark: SparkSession, action: Callable[[], object]) -> tuple[float, int, object]:
    """Seconds and Spark jobs (adaptive-execution stage jobs included) of one call."""
    context = spark.sparkContext
    group = f"bench-{next(_groups)}"
    context.setJobGroup(group, group)
    start = time.perf_counter()
    try:
        result = action()
    finally:
        elapsed = time.perf_counter() - start
        context.setLocalProperty("spark.jobGroup.id", None)  # type: ignore[arg-type]
    return elapsed, len(context.statusTracker().getJobIdsForGroup(group)), result


def measure(
    spark: SparkSession,
    label: str,
    action: Callable[[], object],
    *,
    runs: int = 3,
    warmup: bool = True,
) -> Measurement:
    """Median of `runs` timed calls after one untimed warm-up call."""
    (found,) = measure_alternating(spark, {label: action}, runs=runs, warmup=warmup)
    return found


def measure_alternating(
    spark: SparkSession,
    actions: dict[str, Callable[[], object]],
    *,
    runs: int = 3,
    warmup: bool = True,
) -> list[Measurement]:
    """Like `measure` for several variants, run in turns (A B A B ...) after one warm-up call
    each, so that JIT warm-up and machine drift do not favour the variant measured last."""
    if warmup:
        for action in actions.values():
            action()
    found = {label: Measurement(label, [], 0) for label in actions}
    for _ in range(runs):
        for label, action in actions.items():
            elapsed, jobs, result = timed(spark, action)
            found[label].seconds.append(elapsed)
            found[label].jobs = jobs
            found[label].actions = getattr(result, "spark_actions", found[label].actions)
    return list(found.values())


def table(headers: list[str], rows: list[list[object]]) -> str:
    """A Markdown table."""

    def cell(value: object) -> str:
        if isinstance(value, float):
            return f"{value:.3f}" if value < 1 else f"{value:.2f}"
        return str(value)

    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)
