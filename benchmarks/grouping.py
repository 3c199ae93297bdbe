"""Grouping metrics on a wide table: uniqueness and distinct count of 50 columns, the engine (one
GROUPING SETS query) vs one group-by per column."""

from __future__ import annotations

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from benchmarks._harness import measure_alternating, table
from checkers.metrics import CountDistinct, Uniqueness, run_analysis


def one_group_by_per_column(df: DataFrame) -> None:
    for column in df.columns:
        counts = df.where(F.col(column).isNotNull()).groupBy(column).count()
        counts.agg(
            F.count(F.lit(1)), F.count(F.when(F.col("count") == 1, 1)), F.sum("count")
        ).collect()


def run(
    spark: SparkSession, sources: dict[str, DataFrame], runs: int
) -> tuple[str, list[dict[str, object]]]:
    rows, records = [], []
    for fmt, df in sources.items():
        analyzers = [a for c in df.columns for a in (Uniqueness(c), CountDistinct(c))]
        engine, baseline = measure_alternating(
            spark,
            {
                "engine (one grouping query)": lambda df=df, a=analyzers: run_analysis(df, a),
                "one group-by per column": lambda df=df: one_group_by_per_column(df),
            },
            runs=runs,
        )
        for m in (engine, baseline):
            rows.append(
                [fmt, m.label, m.median, m.jobs, m.actions or "", baseline.median / m.median]
            )
            records.append(
                {"format": fmt, "variant": m.label, "median_s": m.median, "runs": m.seconds}
            )
    text = table(
        ["source", "variant", "median s", "Spark jobs", "engine actions", "speed-up vs per column"],
        rows,
    )
    first = next(iter(sources.values()))
    return (
        f"Uniqueness + CountDistinct of {len(first.columns)} columns, {first.count():,} rows, "
        f"median of {runs} runs, the two variants measured in turns:\n\n{text}",
        records,
    )
