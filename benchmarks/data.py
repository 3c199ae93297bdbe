"""Benchmark data: TPC-H lineitem (tpchgen-cli) as CSV and Parquet, lineitem by ship month, and a
wide table of 50 columns. Generated once under benchmarks/data/ and reused."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

#: Where generated data is cached: `DQ_BENCHMARK_DATA` (large data outside the repository), else
#: benchmarks/data/ (ignored by git).
DATA = Path(os.environ.get("DQ_BENCHMARK_DATA") or Path(__file__).parent / "data")
LINEITEM_SCHEMA = (
    "l_orderkey bigint, l_partkey bigint, l_suppkey bigint, l_linenumber int, "
    "l_quantity double, l_extendedprice double, l_discount double, l_tax double, "
    "l_returnflag string, l_linestatus string, l_shipdate date, l_commitdate date, "
    "l_receiptdate date, l_shipinstruct string, l_shipmode string, l_comment string"
)


def tpchgen_command() -> str:
    found = shutil.which("tpchgen-cli") or str(Path(sys.executable).parent / "tpchgen-cli")
    return found


def lineitem_files(scale: float, formats: tuple[str, ...] = ("csv", "parquet")) -> dict[str, Path]:
    root = DATA / f"sf{scale:g}"
    files = {"csv": root / "csv" / "lineitem.csv", "parquet": root / "parquet" / "lineitem.parquet"}
    files = {fmt: path for fmt, path in files.items() if fmt in formats}
    for fmt, path in files.items():
        if not path.exists():
            subprocess.run(
                [
                    tpchgen_command(),
                    fmt,
                    "-s",
                    f"{scale:g}",
                    "--tables=lineitem",
                    f"--output-dir={path.parent}",
                ],
                check=True,
                capture_output=True,
            )
    return files


def read_lineitem(spark: SparkSession, fmt: str, path: Path) -> DataFrame:
    if fmt == "csv":
        return spark.read.csv(str(path), header=True, schema=LINEITEM_SCHEMA)
    return spark.read.parquet(str(path))


def lineitem_by_month(spark: SparkSession, scale: float, parquet: Path) -> Path:
    target = DATA / f"sf{scale:g}" / "by_month"
    if not (target / "_SUCCESS").exists():
        (
            spark.read.parquet(str(parquet))
            .withColumn("ship_month", F.date_format("l_shipdate", "yyyy-MM"))
            .write.mode("overwrite")
            .partitionBy("ship_month")
            .parquet(str(target))
        )
    return target


def wide_csv(spark: SparkSession, parquet: Path) -> Path:
    """The wide table again, as CSV (a row format: every query reads every column)."""
    target = parquet.with_name(parquet.name + "_csv")
    if not (target / "_SUCCESS").exists():
        spark.read.parquet(str(parquet)).write.mode("overwrite").csv(str(target), header=True)
    return target


def read_wide(spark: SparkSession, fmt: str, path: Path) -> DataFrame:
    if fmt == "csv":
        schema = spark.read.parquet(str(path.with_name(path.name.removesuffix("_csv")))).schema
        return spark.read.csv(str(path), header=True, schema=schema)
    return spark.read.parquet(str(path))


def wide_table(spark: SparkSession, rows: int, columns: int = 50) -> Path:
    """`columns` integer columns with cardinalities from 10 to about `rows` (hashed ids)."""
    target = DATA / f"wide_{rows}x{columns}"
    if not (target / "_SUCCESS").exists():
        exprs = [
            f"CAST(pmod(hash(id, {i}), {min(10 ** (1 + i % 6), rows * 10)}) AS BIGINT) AS c{i:02d}"
            for i in range(columns)
        ]
        spark.range(rows).selectExpr(*exprs).write.mode("overwrite").parquet(str(target))
    return target
