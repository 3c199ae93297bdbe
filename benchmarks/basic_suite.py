"""BASIC suite on TPC-H lineitem: the engine vs one Spark action per metric vs one hand-written
`df.agg` of the same expressions, on CSV and on Parquet."""

from __future__ import annotations

from pyspark.sql import DataFrame, SparkSession

from benchmarks._harness import Measurement, measure, table
from checkers.metrics import (
    Analyzer,
    ApproxCountDistinct,
    ApproxQuantiles,
    Completeness,
    Compliance,
    Maximum,
    Mean,
    Minimum,
    PatternMatch,
    ScanShareableAnalyzer,
    Size,
    StandardDeviation,
    run_analysis,
)

COLUMNS = [
    "l_orderkey",
    "l_partkey",
    "l_suppkey",
    "l_linenumber",
    "l_quantity",
    "l_extendedprice",
    "l_discount",
    "l_tax",
    "l_returnflag",
    "l_linestatus",
    "l_shipdate",
    "l_commitdate",
    "l_receiptdate",
    "l_shipinstruct",
    "l_shipmode",
    "l_comment",
]


def basic_suite() -> list[Analyzer]:
    return [
        Size(),
        *[Completeness(c) for c in COLUMNS],
        Compliance("quantity in 1..50", "l_quantity BETWEEN 1 AND 50"),
        Compliance("discount in 0..0.10", "l_discount BETWEEN 0 AND 0.10"),
        Compliance("tax in 0..0.08", "l_tax BETWEEN 0 AND 0.08"),
        Compliance("known returnflag", "l_returnflag IN ('A', 'N', 'R')"),
        Compliance("known linestatus", "l_linestatus IN ('O', 'F')"),
        Compliance(
            "known shipmode",
            "l_shipmode IN ('AIR', 'FOB', 'MAIL', 'RAIL', 'REG AIR', 'SHIP', 'TRUCK')",
        ),
        PatternMatch("l_comment", r"(?i)\b(special|pending) (requests|deposits)\b"),
        Minimum("l_extendedprice"),
        Maximum("l_extendedprice"),
        Mean("l_extendedprice"),
        StandardDeviation("l_extendedprice"),
        ApproxCountDistinct("l_orderkey"),
        ApproxQuantiles("l_extendedprice", (0.25, 0.5, 0.75)),
    ]


def one_action_per_metric(df: DataFrame, analyzers: list[Analyzer]) -> None:
    for analyzer in analyzers:
        assert isinstance(analyzer, ScanShareableAnalyzer)
        df.agg(*analyzer.aggregations(df.schema)).collect()


def hand_written_agg(df: DataFrame, analyzers: list[Analyzer]) -> None:
    columns = [
        c
        for a in analyzers
        if isinstance(a, ScanShareableAnalyzer)
        for c in a.aggregations(df.schema)
    ]
    df.agg(*columns).collect()


def run(
    spark: SparkSession, sources: dict[str, DataFrame], runs: int
) -> tuple[str, list[dict[str, object]]]:
    suite = basic_suite()
    rows, records = [], []
    for fmt, df in sources.items():
        engine = measure(spark, "engine", lambda df=df: run_analysis(df, suite), runs=runs)
        per_metric = measure(
            spark,
            "one action per metric",
            lambda df=df: one_action_per_metric(df, suite),
            runs=runs,
            warmup=False,
        )
        fused = measure(
            spark,
            "hand-written df.agg",
            lambda df=df: hand_written_agg(df, suite),
            runs=runs,
            warmup=False,
        )
        best_baseline = min(per_metric.median, fused.median)
        for m in (engine, per_metric, fused):
            rows.append(
                [
                    fmt,
                    m.label,
                    m.median,
                    m.jobs,
                    m.actions if m.actions is not None else "",
                    per_metric.median / m.median,
                    m.median / best_baseline,
                ]
            )
            records.append(
                {
                    "format": fmt,
                    "variant": m.label,
                    "median_s": m.median,
                    "runs": m.seconds,
                    "jobs": m.jobs,
                }
            )
    text = table(
        [
            "source",
            "variant",
            "median s",
            "Spark jobs",
            "engine actions",
            "speed-up vs one action per metric",
            "time / faster baseline",
        ],
        rows,
    )
    return f"BASIC suite ({len(suite)} analyzers), median of {runs} runs:\n\n{text}", records


__all__ = ["Measurement", "basic_suite", "run"]
