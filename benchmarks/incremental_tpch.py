"""Incremental checks at TPC-H scale: lineitem (tpchgen-cli, scale 10 by default) written as one
Hive-style Parquet partition per `l_shipdate` day of 1995, the days landing one after another.
Measured on the checkpoint days N: the run that reads day N once the states of days 1..N-1 are
stored, against a full recomputation over days 1..N; the first run (over days 1..N-1 of the first
checkpoint) against a full recomputation of the same days; and the metric suite segmented by one
column against the same suite unsegmented, over every day landed. Times are printed, never
asserted: the report on stdout, each run on stderr.

    python -m benchmarks.incremental_tpch                        # SF10, days 30, 180, 365
    python -m benchmarks.incremental_tpch --scale 1 --checkpoints 5 10
    python -m benchmarks.incremental_tpch --no-uniqueness --segment-runs 0
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from benchmarks._harness import benchmark_session, table
from benchmarks.data import DATA, lineitem_files
from benchmarks.incremental import TICK, Run, _run, _settings, counted, differences, quantile_bounds
from checkers import LessThan, MetricChecker, MetricConstraint, PredicateSingleDatasetChecker
from checkers.metrics import (
    ApproxCountDistinct,
    ApproxQuantile,
    Completeness,
    Maximum,
    Mean,
    Size,
    Uniqueness,
)
from checkers.parsers import HivePartitions, ParquetParser
from checks import QualityCheck
from checks.incremental import Incremental
from scheduling.clocks import Cron
from scheduling.runner import run_checks, run_due
from scheduling.settings import Settings

YEAR = 1995  # wholly inside TPC-H's ship dates (1992-01-02 .. 1998-12-01)
CHECKPOINTS = (30, 180, 365)
PARTITION = "l_shipdate"
SUITE = (
    MetricConstraint(Size(), lambda n: n > 0, "lines were loaded"),
    MetricConstraint(Completeness("l_comment"), lambda v: v == 1.0, "every line has a comment"),
    MetricConstraint(Completeness("l_shipmode"), lambda v: v == 1.0, "every line has a mode"),
    MetricConstraint(Mean("l_extendedprice"), lambda v: 1_000 <= v <= 100_000, "mean price"),
    MetricConstraint(Maximum("l_quantity"), lambda v: v <= 50, "at most 50 items a line"),
    MetricConstraint(ApproxCountDistinct("l_partkey"), lambda v: v >= 1_000, "many parts"),
    MetricConstraint(
        ApproxQuantile("l_extendedprice", 0.5), lambda v: 1_000 <= v <= 100_000, "median price"
    ),
    MetricConstraint(
        Uniqueness(("l_orderkey", "l_linenumber")), lambda v: v == 1.0, "line keys are unique"
    ),
)


def suite(*, uniqueness: bool = True) -> tuple[MetricConstraint, ...]:
    """The metric suite; without `uniqueness`, none that keeps frequency tables."""
    return SUITE if uniqueness else SUITE[:-1]


def lineitem_days(spark: SparkSession, scale: float) -> Path:
    """Lineitem's lines shipped in YEAR, one `l_shipdate=...` directory (one file) per day,
    written once under the benchmark data folder and reused."""
    target = DATA / f"sf{scale:g}" / f"by_day_{YEAR}"
    if not (target / "_SUCCESS").exists():
        parquet = lineitem_files(scale, ("parquet",))["parquet"]
        (
            spark.read.parquet(str(parquet))
            .where(F.year(PARTITION) == YEAR)
            .repartition(PARTITION)
            .write.mode("overwrite")
            .partitionBy(PARTITION)
            .parquet(str(target))
        )
    return target


def staged_days(staged: Path) -> list[Path]:
    return sorted(p for p in staged.iterdir() if p.is_dir() and p.name.startswith(PARTITION))


def land(days: Sequence[Path], live: Path) -> None:
    """Make each day's partition appear under `live`: its files hard-linked (no copy, the same
    size and modification time), its directory renamed into place at once."""
    for day in days:
        incoming = live / f".incoming-{day.name}"
        incoming.mkdir(parents=True)
        for file in day.iterdir():
            if not file.name.startswith((".", "_")):
                os.link(file, incoming / file.name)
        incoming.rename(live / day.name)


def lineitem_checks(
    root: Path,
    *,
    incremental: bool,
    segment_by: Sequence[str] | None = None,
    constraints: Sequence[MetricConstraint] = SUITE,
) -> list[type[QualityCheck]]:
    """Two row predicates with keys and a metric suite over the lines under `root`; with
    `incremental`, over all partitions from stored states, else read whole every run. With
    `segment_by`, the metric suite alone, segmented by those columns (none: unsegmented)."""
    source = ParquetParser(str(root), partitioning=HivePartitions((PARTITION,)))
    scope = Incremental() if incremental else None
    daily = Cron("0 6 * * *")

    class LinesArriveAfterShipping(QualityCheck, register=False):
        parser = source
        incremental = scope
        clock = daily
        tolerance = LessThan(1)

        def checker(self, lines: DataFrame) -> PredicateSingleDatasetChecker:
            return PredicateSingleDatasetChecker(
                lines, "l_receiptdate > l_shipdate", key=("l_orderkey", "l_linenumber")
            )

    class PricesAreSane(QualityCheck, register=False):
        parser = source
        incremental = scope
        clock = daily
        tolerance = LessThan(1)

        def checker(self, lines: DataFrame) -> PredicateSingleDatasetChecker:
            return PredicateSingleDatasetChecker(
                lines,
                "l_discount BETWEEN 0 AND 0.1 AND l_tax BETWEEN 0 AND 0.08 "
                "AND l_quantity BETWEEN 1 AND 50 AND l_extendedprice > 0",
                key="l_partkey",
            )

    class LinesMetricSuite(QualityCheck, register=False):
        parser = source
        incremental = scope
        clock = daily

        def checker(self, lines: DataFrame) -> MetricChecker:
            return MetricChecker(lines, constraints, segment_by=segment_by or ())

    if segment_by is not None:
        return [LinesMetricSuite]
    return [LinesArriveAfterShipping, PricesAreSane, LinesMetricSuite]


def _morning_after(day: Path) -> dt.datetime:
    date = dt.date.fromisoformat(day.name.split("=", 1)[1])
    return dt.datetime.combine(date + dt.timedelta(days=1), TICK, dt.UTC)


def _say(run: Run) -> None:
    print(
        f"day {run.day}: {run.variant} {run.seconds:.2f} s, {run.jobs} jobs, {run.rows_read} rows, "
        f"{'all' if run.partitions_read is None else run.partitions_read} partitions read; "
        + ", ".join(f"{step} {spent:.2f}" for step, spent in run.timings.items() if spent >= 0.1),
        file=sys.stderr,
        flush=True,
    )


class Replay:
    """The incremental and full variants over one live folder, each on its own project database."""

    def __init__(
        self,
        spark: SparkSession,
        staged: Path,
        work: Path,
        constraints: Sequence[MetricConstraint] = SUITE,
    ) -> None:
        self.spark = spark
        self.days = staged_days(staged)
        self.live = work / "lineitem"
        self.live.mkdir(parents=True)
        self.landed = 0
        self.incremental = _settings(f"sqlite:///{work / 'incremental.db'}")
        self.full = _settings(f"sqlite:///{work / 'full.db'}")
        self.fast = lineitem_checks(self.live, incremental=True, constraints=constraints)
        self.slow = lineitem_checks(self.live, incremental=False, constraints=constraints)

    def land_until(self, n: int) -> dt.datetime:
        """Days up to `n` landed; the next morning's tick."""
        land(self.days[self.landed : n], self.live)
        self.landed = max(self.landed, n)
        return _morning_after(self.days[n - 1])

    def tick(
        self, n: int, variant: str, settings: Settings, checks: list[type[QualityCheck]]
    ) -> Run:
        now = self.land_until(n)
        run = _run(
            n,
            variant,
            self.spark,
            partial(run_due, now, settings=settings, checks=checks, spark=self.spark),
        )
        _say(run)
        return run

    def recompute(self, n: int) -> Run:
        run = self.tick(n, "full recomputation", self.full, self.slow)
        run.bounds = quantile_bounds(self.spark, self.live, SUITE)
        return run


def warm_up(
    spark: SparkSession, staged: Path, work: Path, constraints: Sequence[MetricConstraint]
) -> None:
    """Both variants once over the first day, in a folder and databases of their own: the
    measured runs start with Spark's and Python's code paths loaded."""
    replay = Replay(spark, staged, work / "warm-up", constraints)
    replay.tick(1, "warm-up, incremental", replay.incremental, replay.fast)
    replay.tick(1, "warm-up, full", replay.full, replay.slow)


def measure_days(
    spark: SparkSession,
    staged: Path,
    work: Path,
    checkpoints: Sequence[int],
    constraints: Sequence[MetricConstraint],
) -> tuple[list[tuple[Run, Run]], list[Run]]:
    """(first run, full recomputation of the same days) and, for each checkpoint N: the run of
    day N after one run over the days not yet stored, and the full recomputation of day N."""
    replay = Replay(spark, staged, work / "measured", constraints)
    first: list[tuple[Run, Run]] = []
    measured: list[Run] = []
    for n in checkpoints:
        if n - 1 > replay.landed:
            stored = replay.landed
            catch_up = replay.tick(
                n - 1,
                f"incremental, days {stored + 1}-{n - 1} new",
                replay.incremental,
                replay.fast,
            )
            if stored == 0:
                first.append((catch_up, replay.recompute(n - 1)))
        run = replay.tick(n, "incremental", replay.incremental, replay.fast)
        measured += [run, replay.recompute(n)]
    return first, measured


def measure_segments(
    spark: SparkSession,
    root: Path,
    work: Path,
    segment_by: Sequence[str],
    constraints: Sequence[MetricConstraint],
    *,
    runs: int,
) -> list[tuple[str, list[float], int, int]]:
    """The metric suite over everything under `root`, segmented and not, read whole, in turns
    (A B A B ...): label, seconds of each run, Spark jobs and segments of the last."""
    variants: dict[str, Callable[[], object]] = {}
    for label, columns in (
        ("unsegmented", ()),
        (f"segmented by {', '.join(segment_by)}", segment_by),
    ):
        settings = _settings(f"sqlite:///{work / f'segments-{len(columns)}.db'}")
        checks = lineitem_checks(
            root, incremental=False, segment_by=columns, constraints=constraints
        )
        now = dt.datetime.now(dt.UTC)
        variants[label] = partial(run_checks, checks, now=now, settings=settings, spark=spark)
    found: dict[str, tuple[list[float], int, int]] = {label: ([], 0, 0) for label in variants}
    if runs < 1:
        return []
    for _ in range(runs):
        for label, action in variants.items():
            seconds, jobs, report = counted(spark, action)
            (outcome,) = report.outcomes  # type: ignore[attr-defined]
            segments = (outcome.total or 0) // len(constraints)
            found[label][0].append(seconds)
            found[label] = (found[label][0], jobs, segments)
            print(
                f"{label}: {seconds:.2f} s, {jobs} jobs, {outcome.status.value}",
                file=sys.stderr,
                flush=True,
            )
    return [(label, s, jobs, segments) for label, (s, jobs, segments) in found.items()]


def report(
    first: Sequence[tuple[Run, Run]],
    measured: Sequence[Run],
    segments: Sequence[tuple[str, list[float], int, int]],
    *,
    constraints: int,
    scale: float,
    rows_per_day: float,
) -> str:
    days: list[list[object]] = []
    for run, full in zip(measured[::2], measured[1::2], strict=True):
        same = "yes" if not differences(run, full) else "NO"
        days.append(
            [
                run.day,
                run.seconds,
                run.jobs,
                run.rows_read,
                run.partitions_read,
                full.seconds,
                full.jobs,
                full.rows_read,
                full.seconds / run.seconds,
                same,
            ]
        )
    day_table = table(
        [
            "day",
            "incremental s",
            "Spark jobs",
            "rows read",
            "partitions read",
            "full s",
            "full jobs",
            "full rows read",
            "full s / incremental s",
            "outcomes = full",
        ],
        days,
    )
    firsts = table(
        ["run", "days", "s", "Spark jobs", "rows read", "outcomes = full"],
        [
            row
            for run, full in first
            for row in (
                [
                    "first incremental run",
                    run.day,
                    run.seconds,
                    run.jobs,
                    run.rows_read,
                    "yes" if not differences(run, full) else "NO",
                ],
                ["full recomputation", full.day, full.seconds, full.jobs, full.rows_read, ""],
            )
        ],
    )
    unsegmented = statistics.median(segments[0][1]) if segments else 0.0
    segment_table = table(
        [
            "metric suite over the year",
            "segments",
            "median s",
            "runs",
            "Spark jobs",
            "s / unsegmented s",
        ],
        [
            [label, count, statistics.median(s), len(s), jobs, statistics.median(s) / unsegmented]
            for label, s, jobs, count in segments
        ],
    )
    disagreements = [
        f"day {run.day}, {run.variant}: {difference}"
        for run, full in [*first, *zip(measured[::2], measured[1::2], strict=True)]
        for difference in differences(run, full)
    ]
    return (
        f"TPC-H lineitem SF{scale:g}, lines shipped in {YEAR} as daily partitions "
        f"({rows_per_day:,.0f} rows a day on average); 3 checks (2 row predicates with keys, a "
        f"metric suite of {constraints} constraints); rows read are summed over the checks:\n\n"
        f"{day_table}\n\nThe first run against a full recomputation of the same days:\n\n"
        f"{firsts}"
        + (
            f"\n\nPer-segment metrics against the same suite unsegmented, read whole:\n\n"
            f"{segment_table}"
            if segments
            else ""
        )
        + "".join(f"\n\nNot the same outcome: {d}" for d in disagreements)
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--scale", type=float, default=10, help="TPC-H scale factor")
    parser.add_argument("--checkpoints", type=int, nargs="*", default=list(CHECKPOINTS))
    parser.add_argument("--segment-by", nargs="+", default=["l_shipmode"])
    parser.add_argument(
        "--segment-runs", type=int, default=1, help="runs of each suite variant (0: none)"
    )
    parser.add_argument(
        "--no-uniqueness",
        action="store_true",
        help="leave Uniqueness of the line keys, the one analyzer with frequency tables, out",
    )
    parser.add_argument("--work", type=Path, default=None, help="default: a temporary directory")
    args = parser.parse_args(argv)
    checkpoints = sorted(set(args.checkpoints))
    if not checkpoints or checkpoints[0] < 2 or checkpoints[-1] > 365:
        parser.error("checkpoints must be between 2 and 365")
    spark = benchmark_session()
    started = time.perf_counter()
    staged = lineitem_days(spark, args.scale)
    print(f"staged days: {staged} ({time.perf_counter() - started:.0f} s)", file=sys.stderr)
    work = args.work or Path(tempfile.mkdtemp(prefix="dq-bench-incremental-tpch-"))
    os.environ["DQ_STATE_DIR"] = str(work / "state")  # frequency tables of the partition store
    constraints = suite(uniqueness=not args.no_uniqueness)
    warm_up(spark, staged, work, constraints)
    first, measured = measure_days(spark, staged, work, checkpoints, constraints)
    live = work / "measured" / "lineitem"
    segments = measure_segments(
        spark, live, work, args.segment_by, constraints, runs=args.segment_runs
    )
    rows = spark.read.parquet(str(live)).count() / checkpoints[-1]
    text = report(
        first,
        measured,
        segments,
        constraints=len(constraints),
        scale=args.scale,
        rows_per_day=rows,
    )
    print(f"{text}\n\n{time.perf_counter() - started:.0f} s in all.")
    print(f"work directory: {work}", file=sys.stderr)
    spark.stop()
    if args.work is None:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
