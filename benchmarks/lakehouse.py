"""Metrics from metadata on TPC-H lineitem in Parquet, Delta and Iceberg: the
metadata-answerable suite (Size, Completeness of every column, Minimum/Maximum of three integer
columns) and the BASIC suite, each with and without metadata answers, against the hand-written
`df.agg` of the same expressions in the same process. Then an append of one day to a Delta table
of a year of daily commits: the incremental run (the added file only) against a recomputation
from scratch.

    python -m benchmarks.lakehouse                  # SF0.1, a quick table
    python -m benchmarks.lakehouse --scale 1 --runs 3
    DQ_BENCHMARK_DATA=/data/tpch python -m benchmarks.lakehouse --scale 1   # data kept there
"""

from __future__ import annotations

import argparse
import datetime as dt
import shutil
import tempfile
from pathlib import Path

import sqlalchemy as sa

from benchmarks._harness import benchmark_session, measure_alternating, table, timed
from benchmarks.basic_suite import COLUMNS, basic_suite, hand_written_agg
from benchmarks.data import DATA, lineitem_files
from checkers import MetricChecker
from checkers.metrics import (
    Analyzer,
    Check,
    CheckLevel,
    Completeness,
    Maximum,
    Minimum,
    Size,
    run_analysis,
)
from checkers.parsers import DeltaParser, IcebergParser, ParquetParser
from checks import QualityCheck
from checks.incremental import Incremental


def metadata_suite() -> list[Analyzer]:
    bounded = ("l_orderkey", "l_linenumber", "l_partkey")  # integers: exact bounds
    return [
        Size(),
        *(Completeness(c) for c in COLUMNS),
        *(kind(c) for c in bounded for kind in (Minimum, Maximum)),
    ]


def delta_copy(scale: float, parquet: str) -> str:
    import pyarrow.parquet as pq
    from deltalake import write_deltalake

    target = DATA / f"sf{scale:g}" / "delta"
    if not (target / "_delta_log").exists():
        write_deltalake(str(target), pq.read_table(parquet))
    return str(target)


def iceberg_copy(scale: float, parquet: str) -> IcebergParser:
    """The same rows in an Iceberg table of a SQL catalog on SQLite, written by pyiceberg."""
    import pyarrow.parquet as pq
    from pyiceberg.catalog.sql import SqlCatalog

    root = DATA / f"sf{scale:g}" / "iceberg"
    root.mkdir(parents=True, exist_ok=True)
    properties = {"uri": f"sqlite:///{root / 'catalog.db'}", "warehouse": f"file://{root}"}
    catalog = SqlCatalog("bench", **properties)
    if not catalog.table_exists("tpch.lineitem"):
        catalog.create_namespace_if_not_exists("tpch")
        data = pq.read_table(parquet)
        catalog.create_table("tpch.lineitem", schema=data.schema).append(data)
    return IcebergParser("tpch.lineitem", "bench", catalog_properties={"type": "sql", **properties})


def suites(spark, scale: float, runs: int) -> str:  # type: ignore[no-untyped-def]
    parquet = str(lineitem_files(scale, ("parquet",))["parquet"])
    sources = {
        "Parquet": ParquetParser(parquet),
        "Delta": DeltaParser(delta_copy(scale, parquet)),
        "Iceberg": iceberg_copy(scale, parquet),
    }
    rows = []
    for suite_name, suite in (("metadata suite", metadata_suite()), ("BASIC", basic_suite())):
        for fmt, source in sources.items():
            df = source.load(spark)
            found = measure_alternating(
                spark,
                {
                    "engine, metadata answers": lambda df=df, s=suite: run_analysis(df, s),
                    "engine, scan only": lambda df=df, s=suite: run_analysis(
                        df, s, use_metadata=False
                    ),
                    "hand-written df.agg": lambda df=df, s=suite: hand_written_agg(df, s),
                },
                runs=runs,
            )
            agg = found[-1].median
            rows += [[suite_name, fmt, m.label, m.median, m.jobs, m.median / agg] for m in found]
    headers = ["suite", "source", "variant", "median s", "Spark jobs", "time / df.agg"]
    return f"TPC-H lineitem SF{scale:g}, median of {runs} runs:\n\n" + table(headers, rows)


def _daily_table(path: Path, days: int, rows: int) -> list[dt.date]:
    import pyarrow as pa
    from deltalake import write_deltalake

    first = dt.date(2025, 1, 1)
    dates = [first + dt.timedelta(days=n) for n in range(days + 1)]
    for n, day in enumerate(dates[:-1]):
        ids = pa.array(range(n * rows, (n + 1) * rows), pa.int64())
        amounts = pa.array([float(i % 97) for i in range(rows)])
        data = pa.table({"id": ids, "amount": amounts, "day": [day.isoformat()] * rows})
        write_deltalake(str(path), data, mode="append", partition_by=["day"])
    return dates


def append_figure(spark, days: int, rows: int) -> str:  # type: ignore[no-untyped-def]
    """One day appended to `days` daily commits: the incremental run against from scratch (the
    table and its states in a temporary folder, removed after)."""
    work = Path(tempfile.mkdtemp(prefix="dq-lakehouse-"))
    try:
        return _append_in(spark, work, days, rows)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _append_in(spark, work: Path, days: int, rows: int) -> str:  # type: ignore[no-untyped-def]
    import pyarrow as pa
    from deltalake import write_deltalake

    from scheduling.schema import migrate
    from scheduling.tick.evaluate import evaluate_checks
    from scheduling.tick.partition_store import PartitionStore

    dates = _daily_table(work / "orders", days, rows)
    source = DeltaParser(str(work / "orders"))

    class DailyOrders(QualityCheck, register=False):
        name = "daily_orders"
        parser = source
        incremental = Incremental()

        def checker(self, orders):  # type: ignore[no-untyped-def]
            check = Check(CheckLevel.ERROR, "orders").has_completeness("amount", lambda v: v == 1)
            return MetricChecker(orders, [check.has_min("amount", lambda v: v >= 0)])

    engine = sa.create_engine(f"sqlite:///{work / 'dq.db'}")
    migrate(engine)
    store = PartitionStore(engine, work / "states")
    now = dt.datetime.combine(dates[-1], dt.time(6), dt.UTC)
    evaluate_checks([DailyOrders], spark=spark, now=now, partitions=store)  # the year, stored
    last = dates[-1].isoformat()
    appended = pa.table({"id": [-1] * rows, "amount": [1.0] * rows, "day": [last] * rows})
    write_deltalake(str(work / "orders"), appended, mode="append", partition_by=["day"])
    rows_out = []
    for label, full in (("incremental (the added file)", False), ("from scratch", True)):
        seconds, jobs, found = timed(
            spark,
            lambda full=full: evaluate_checks(
                [DailyOrders], spark=spark, now=now, partitions=store, full=full
            ),
        )
        outcome = found[0]  # type: ignore[index]
        rows_out.append([label, seconds, jobs, outcome.reading.get("rows_read")])
    headers = ["run after the append", "seconds", "Spark jobs", "rows read"]
    return f"A Delta table of {days} daily commits of {rows:,} rows, one day appended:\n\n" + table(
        headers, rows_out
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--scale", type=float, default=0.1)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--days", type=int, default=365)
    parser.add_argument("--rows-per-day", type=int, default=1000)
    parser.add_argument("--part", choices=("all", "suites", "append"), default="all")
    args = parser.parse_args()
    spark = benchmark_session()
    if args.part in ("all", "suites"):
        print(suites(spark, args.scale, args.runs), end="\n\n", flush=True)
    if args.part in ("all", "append"):
        print(append_figure(spark, args.days, args.rows_per_day))


if __name__ == "__main__":
    main()
