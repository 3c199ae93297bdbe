"""Grouping metrics on a wide table: uniqueness and distinct count of 50 columns, the engine (one
GROUPING SETS query) vs one group-by per column."""

from __future__ import annotations

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from benchmarks._harness import measure, table
from checkers.metrics import CountDistinct, Uniqueness, run_analysis


def one_group_by_per_column(df: DataFrame) -> None:
    for column in df.columns:
        counts = df.where(F.col(column).isNotNull()).groupBy(column).count()
        counts.agg(
            F.count(F.lit(1)), F.count(F.when(F.col("count") == 1, 1)), F.sum("count")
        ).collect()


def run(spark: SparkSession, df: DataFrame, runs: int) -> tuple[str, list[dict[str, object]]]:
    analyzers = [a for c in df.columns for a in (Uniqueness(c), CountDistinct(c))]
    engine = measure(
        spark, "engine (one grouping query)", lambda: run_analysis(df, analyzers), runs=runs
    )
    baseline = measure(
        spark,
        "one group-by per column",
        lambda: one_group_by_per_column(df),
        runs=runs,
        warmup=False,
    )
    rows = [[m.label, m.median, m.jobs, baseline.median / m.median] for m in (engine, baseline)]
    text = table(["variant", "median s", "Spark jobs", "speed-up vs one group-by per column"], rows)
    records = [
        {"variant": m.label, "median_s": m.median, "runs": m.seconds, "jobs": m.jobs}
        for m in (engine, baseline)
    ]
    return (
        f"Uniqueness + CountDistinct of {len(df.columns)} columns, {df.count():,} rows "
        f"(Parquet), median of {runs} runs:\n\n{text}",
        records,
    )
