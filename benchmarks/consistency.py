"""Cross-store consistency: the hashdiff ConsistencyChecker against a JDBC read joined in Spark,
against count(*) on both sides, and against reladiff on PostgreSQL and MariaDB.

python -m benchmarks.consistency                      # 10,000,000 TPC-H orders (built once)
python -m benchmarks.consistency --rows 200000 --differences 0 10 1000   # seconds

TPC-H `orders` (tpchgen-cli) lives as Parquet and as a table in PostgreSQL and MariaDB
(database dq_bench; benchmarks/orders_data.py); each variant applies 0, 10 or 10,000
differences to the PostgreSQL copy (a third deleted, a third inserted, a third updated) and
undoes them afterwards. reladiff runs from its own venv (`make reladiff-venv`, or
--reladiff-python), never the project's. Prints tables; asserts nothing about time.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from functools import reduce
from pathlib import Path

import sqlalchemy as sa
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from benchmarks import orders_data
from benchmarks._harness import table, timed
from benchmarks.data import DATA
from checkers.parsers.jdbc import JdbcParser
from checkers.spark import spark_session

try:
    from checkers.consistency import ConsistencyChecker, SqlTable
except ImportError:  # the checker is being written: the baselines still run
    ConsistencyChecker = SqlTable = None  # type: ignore[assignment,misc]

KEY = "o_orderkey"
RELADIFF = Path(__file__).with_name("reladiff_diff.py")
#: reladiff's own venv (`make reladiff-venv`), never the project's.
RELADIFF_PYTHON = Path(__file__).parents[1] / ".reladiff-venv" / "bin" / "python"
# Targets of the issue, printed beside the results (never asserted).
COUNT_RATIO_TARGET, ROWS_SHARE_TARGET, FEW_DIFFERENCES = 3.0, 0.001, 10


def _server_url(environ_name: str, default: str, database: str) -> str:
    url = sa.make_url(os.environ.get(environ_name, default)).set(database=database)
    return url.render_as_string(hide_password=False)


def _median(
    spark: SparkSession, action: Callable[[], object], runs: int
) -> tuple[float, int, object]:
    """Median seconds of `runs` calls, the last call's Spark jobs and result."""
    seconds, jobs, result = [], 0, None
    for _ in range(runs):
        elapsed, jobs, result = timed(spark, action)
        seconds.append(elapsed)
    return statistics.median(seconds), jobs, result


def _count_sql(url: str, name: str) -> int:
    engine = sa.create_engine(url)
    with engine.connect() as connection:
        found = connection.exec_driver_sql(f"SELECT count(*) FROM {name}").scalar_one()
    engine.dispose()
    return int(found)


def _jdbc_join(spark: SparkSession, orders: orders_data.Orders, partitions: int) -> tuple[int, ...]:
    """The whole PostgreSQL table through Spark's JDBC source, full-outer-joined with the Parquet
    on the key; every column compared: (missing in left, missing in right, differing)."""
    left = JdbcParser(
        orders.postgres_url, table=orders.table, partition_column=KEY, num_partitions=partitions
    ).read(spark)
    right = spark.read.parquet(str(orders.parquet))
    left = left.select([F.col(c).alias(f"l_{c}") for c in orders_data.COLUMNS])
    right = right.select([F.col(c).alias(f"r_{c}") for c in orders_data.COLUMNS])
    joined = left.join(right, F.col(f"l_{KEY}") == F.col(f"r_{KEY}"), "full_outer")
    same = reduce(
        lambda a, b: a & b,
        [F.col(f"l_{c}").eqNullSafe(F.col(f"r_{c}")) for c in orders_data.COLUMNS[1:]],
    )
    both = F.col(f"l_{KEY}").isNotNull() & F.col(f"r_{KEY}").isNotNull()
    row = joined.agg(
        F.count(F.when(F.col(f"l_{KEY}").isNull(), 1)),
        F.count(F.when(F.col(f"r_{KEY}").isNull(), 1)),
        F.count(F.when(both & ~same, 1)),
    ).first()
    assert row is not None
    return tuple(int(v) for v in row)


def _checker(left: object, right: object) -> object:
    return ConsistencyChecker(left=left, right=right, key=KEY).run()


def _metric(result: object, name: str) -> int | None:
    value = getattr(result, "metrics", {}).get(name)
    value = getattr(value, "value", value)
    return None if value is None else int(value)  # type: ignore[call-overload]


def _fetched(result: object) -> tuple[int | None, int | None]:
    return _metric(result, "rows_fetched_left"), _metric(result, "rows_fetched_right")


def _found(result: object) -> tuple[int | None, ...]:
    return tuple(_metric(result, n) for n in ("missing_in_left", "missing_in_right", "differing"))


def _reladiff(args: argparse.Namespace, left_url: str, right_url: str, name: str) -> dict:
    def plain(url: str) -> str:  # reladiff's own drivers: postgresql://, mysql://
        parsed = sa.make_url(url)
        return parsed.set(drivername=parsed.get_backend_name()).render_as_string(
            hide_password=False
        )

    command = [args.reladiff_python, str(RELADIFF), plain(left_url), plain(right_url), name, KEY]
    command += [",".join(orders_data.COLUMNS), str(args.reladiff_threads)]
    start = time.perf_counter()
    done = subprocess.run(command, check=True, capture_output=True, text=True)
    found = json.loads(done.stdout.strip().splitlines()[-1])
    found["process_seconds"] = time.perf_counter() - start
    return found


def _share(rows: int | None, total: int) -> str:
    return "" if rows is None else f"{rows / total:.4%}"


def _ratio(seconds: float, baseline: float) -> float:
    return seconds / baseline if baseline else float("nan")


def _verdict(met: bool) -> str:
    return "met" if met else "**not met**"


PARQUET_HEADERS = [
    "differences",
    "method",
    "s",
    "Spark jobs",
    "rows out of PostgreSQL",
    "share of table",
    "rows from Parquet",
    "found (missing in PG / in Parquet / differing)",
    "as applied",
    "time / count(*)",
]
PAIR_HEADERS = [
    "differences",
    "method",
    "s",
    "rows out of PostgreSQL",
    "rows out of MariaDB",
    "found (missing in PG / in MariaDB / differing)",
    "as applied",
    "time / count(*)",
    "time / reladiff",
]


class _Variant:
    """One number of differences applied to the PostgreSQL copy: what it found, against what."""

    def __init__(self, applied: orders_data.Differences, total: int) -> None:
        self.applied, self.total = applied, total
        self.label = f"{applied.total:,}"
        self.expected = (applied.deleted, applied.inserted, applied.updated)
        self.targets: list[str] = []

    def found(self, found: tuple[object, ...]) -> list[object]:
        return [" / ".join(map(str, found)), "yes" if found == self.expected else "NO"]


def _against_parquet(
    spark: SparkSession, args: argparse.Namespace, orders: orders_data.Orders, v: _Variant
) -> list[list[object]]:
    pg = orders.postgres_url
    parquet = spark.read.parquet(str(orders.parquet))
    pg_s, _, _ = _median(spark, lambda: _count_sql(pg, orders.table), args.runs)
    pq_s, pq_jobs, _ = _median(spark, parquet.count, args.runs)
    base = pg_s + pq_s
    rows: list[list[object]] = [
        [v.label, "count(*) PostgreSQL + Parquet (baseline)", base, pq_jobs, 1, "", 1, "", "", 1.0]
    ]
    if ConsistencyChecker is None:
        rows.append([v.label, "ConsistencyChecker", "not available", *[""] * 7])
    else:
        s, jobs, result = _median(
            spark,
            lambda: _checker(SqlTable(pg, orders.table), spark.read.parquet(str(orders.parquet))),
            args.runs,
        )
        left, right = _fetched(result)
        found = v.found(_found(result))
        if error := getattr(result, "error", None):
            found[0] = f"{found[0]} (error: {error})"
        rows.append(
            [
                v.label,
                "ConsistencyChecker",
                s,
                jobs,
                left,
                _share(left, v.total),
                right,
                *found,
                _ratio(s, base),
            ]
        )
        if v.applied.total <= FEW_DIFFERENCES:
            share = (left or 0) / v.total
            v.targets.append(
                f"* {v.label} differences, Parquet: {_ratio(s, base):.2f}x count(*) (target at "
                f"most {COUNT_RATIO_TARGET:g}x: {_verdict(s <= COUNT_RATIO_TARGET * base)}); "
                f"{share:.4%} of PostgreSQL's rows out (target under "
                f"{ROWS_SHARE_TARGET:.1%}: {_verdict(share < ROWS_SHARE_TARGET)})"
            )
    s, jobs, found = _median(spark, lambda: _jdbc_join(spark, orders, args.partitions), args.runs)
    now = v.total - v.applied.deleted + v.applied.inserted
    method = f"JDBC read ({args.partitions} partitions) + full outer join in Spark"
    shown = v.found(found)  # type: ignore[arg-type]
    rows.append(
        [v.label, method, s, jobs, now, _share(now, v.total), orders.rows, *shown, _ratio(s, base)]
    )
    return rows


def _against_mariadb(
    spark: SparkSession, args: argparse.Namespace, orders: orders_data.Orders, v: _Variant
) -> list[list[object]]:
    pg, maria, name = orders.postgres_url, orders.mariadb_url, orders.table
    pg_s, _, _ = _median(spark, lambda: _count_sql(pg, name), args.runs)
    maria_s, _, _ = _median(spark, lambda: _count_sql(maria, name), args.runs)
    base = pg_s + maria_s
    rows: list[list[object]] = [
        [v.label, "count(*) PostgreSQL + MariaDB (baseline)", base, 1, 1, "", "", 1.0, ""]
    ]
    reladiff = None
    if not args.no_reladiff:
        runs = [_reladiff(args, pg, maria, name) for _ in range(args.runs)]
        reladiff = sorted(runs, key=lambda r: r["seconds"])[len(runs) // 2]
    if ConsistencyChecker is None:
        rows.append([v.label, "ConsistencyChecker", "not available", *[""] * 6])
    else:
        s, _, result = _median(
            spark, lambda: _checker(SqlTable(pg, name), SqlTable(maria, name)), args.runs
        )
        left, right = _fetched(result)
        versus = _ratio(s, reladiff["seconds"]) if reladiff else ""
        rows.append(
            [
                v.label,
                "ConsistencyChecker",
                s,
                left,
                right,
                *v.found(_found(result)),
                _ratio(s, base),
                versus,
            ]
        )
        if reladiff:
            v.targets.append(
                f"* {v.label} differences, PostgreSQL/MariaDB: {versus:.2f}x reladiff's time "
                f"(target under 1: {_verdict(s < reladiff['seconds'])})"
            )
    if reladiff:
        found = (reladiff["only_right"], reladiff["only_left"], reladiff["updated"])
        method = (
            f"reladiff {_reladiff_version(args)} (hashdiff, {args.reladiff_threads} thread(s); "
            f"process {reladiff['process_seconds']:.2f} s)"
        )
        downloaded = f"≤{reladiff['rows_downloaded']}"
        rows.append(
            [
                v.label,
                method,
                reladiff["seconds"],
                downloaded,
                downloaded,
                *v.found(found),
                _ratio(reladiff["seconds"], base),
                1.0,
            ]
        )
    return rows


def run(spark: SparkSession, args: argparse.Namespace, orders: orders_data.Orders) -> str:
    orders_data.restore(orders.postgres_url, orders.table)  # after a run that was stopped
    total = _count_sql(orders.postgres_url, orders.table)
    parquet_rows: list[list[object]] = []
    pair_rows: list[list[object]] = []
    targets: list[str] = []
    spark.read.parquet(str(orders.parquet)).count()  # warm-up: executors start, JIT
    try:
        for count in args.differences:
            applied = orders_data.apply_differences(orders.postgres_url, orders.table, count)
            variant = _Variant(applied, total)
            parquet_rows += _against_parquet(spark, args, orders, variant)
            if not args.no_pair:
                pair_rows += _against_mariadb(spark, args, orders, variant)
            targets += variant.targets
    finally:
        orders_data.restore(orders.postgres_url, orders.table)
    text = (
        f"PostgreSQL (left, with the differences) against the Parquet file (right), {total:,} "
        f"rows, median of {args.runs} run(s):\n\n{table(PARQUET_HEADERS, parquet_rows)}"
    )
    if not args.no_pair:
        text += (
            f"\n\nPostgreSQL (left, with the differences) against MariaDB (right), {total:,} "
            "rows (reladiff counts the larger side of each segment it downloads):\n\n"
            + table(PAIR_HEADERS, pair_rows)
        )
    if targets:
        text += "\n\nTargets (printed, not asserted):\n\n" + "\n".join(targets)
    return text


def _reladiff_version(args: argparse.Namespace) -> str:
    done = subprocess.run(
        [args.reladiff_python, "-c", "import reladiff; print(reladiff.__version__)"],
        capture_output=True,
        text=True,
    )
    return done.stdout.strip()


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--data", type=Path, default=DATA, help="where the files are cached")
    parser.add_argument("--differences", type=int, nargs="*", default=[0, 10, 10_000])
    parser.add_argument("--runs", type=int, default=1, help="median of this many runs")
    parser.add_argument("--partitions", type=int, default=4, help="JDBC read partitions")
    parser.add_argument(
        "--postgres-url",
        default=_server_url(
            "DQ_TEST_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/", "dq_bench"
        ),
    )
    parser.add_argument(
        "--mariadb-url",
        default=_server_url(
            "DQ_TEST_MARIADB_URL", "mysql+pymysql://root@127.0.0.1:3306/", "dq_bench"
        ),
    )
    parser.add_argument("--reladiff-python", default=str(RELADIFF_PYTHON))
    parser.add_argument("--reladiff-threads", type=int, default=1)
    parser.add_argument("--no-reladiff", action="store_true")
    parser.add_argument("--no-pair", action="store_true", help="skip PostgreSQL/MariaDB")
    parser.add_argument("--build-only", action="store_true", help="build the data and stop")
    args = parser.parse_args()

    for url in (args.postgres_url, args.mariadb_url):
        orders_data.ensure_database(url)
    orders, built_s = orders_data.build(args.rows, args.data, args.postgres_url, args.mariadb_url)
    print(f"data for {args.rows:,} orders ready in {built_s:.1f} s ({orders.parquet})", flush=True)
    if args.build_only:
        return
    if not args.no_reladiff and not Path(args.reladiff_python).exists():
        sys.exit(
            f"{args.reladiff_python} not found: make reladiff-venv, or give --reladiff-python "
            "(a venv with reladiff[postgresql,mysql]), or --no-reladiff"
        )
    spark = spark_session(
        app_name="dq-bench-consistency",
        config={"spark.driver.memory": "4g", "spark.sql.shuffle.partitions": "8"},
    )
    started = time.perf_counter()
    text = run(spark, args, orders)
    print(text)
    print(f"\n({time.perf_counter() - started:.0f} s)")
    spark.stop()


if __name__ == "__main__":
    main()
