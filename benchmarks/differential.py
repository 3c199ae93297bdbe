"""Differential updates on lineitem partitioned by ship month: append a month, replace a month,
and a view over 12 months, all from stored states, against recomputing from scratch."""

from __future__ import annotations

import tempfile
from pathlib import Path

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from benchmarks._harness import measure, table, timed
from benchmarks.basic_suite import basic_suite
from checkers.metrics import FileStateStore, metrics_for_view, run_analysis

APPENDED_MONTHS = 12


def run(spark: SparkSession, by_month: Path, runs: int) -> tuple[str, list[dict[str, object]]]:
    suite = basic_suite()
    data = spark.read.parquet(str(by_month))
    months = sorted(r[0] for r in data.select("ship_month").distinct().collect())
    base_months, appended = months[: -APPENDED_MONTHS - 1], months[-APPENDED_MONTHS - 1 : -1]
    store = FileStateStore(tempfile.mkdtemp(prefix="dq-bench-states-"))
    base = data.where(F.col("ship_month").isin(base_months))
    run_analysis(base, suite, state_store=store, dataset="lineitem", partition="base")

    rows, records = [], []
    for month in appended:

        def update(month: str = month) -> object:
            part = data.where(F.col("ship_month") == month)
            run_analysis(part, suite, state_store=store, dataset="lineitem", partition=month)
            return metrics_for_view(store, suite, dataset="lineitem")

        update_s, update_jobs, _ = timed(spark, update)
        so_far = data.where(F.col("ship_month") <= month)
        recompute_s, recompute_jobs, _ = timed(
            spark, lambda so_far=so_far: run_analysis(so_far, suite)
        )
        rows.append(
            [month, update_s, update_jobs, recompute_s, recompute_jobs, recompute_s / update_s]
        )
        records.append({"month": month, "update_s": update_s, "recompute_s": recompute_s})
    append_table = table(
        ["appended month", "update s", "jobs", "recompute s", "jobs", "recompute / update"], rows
    )

    replaced = appended[len(appended) // 2]
    modified = data.where(F.col("ship_month") == replaced).withColumn(
        "l_quantity", F.col("l_quantity") + 1
    )

    def replace() -> object:
        run_analysis(modified, suite, state_store=store, dataset="lineitem", partition=replaced)
        return metrics_for_view(store, suite, dataset="lineitem")

    everything = data.where(F.col("ship_month") <= appended[-1])
    rebuilt = everything.where(F.col("ship_month") != replaced).unionByName(modified)
    replace_m = measure(spark, "replace one month (states)", replace, runs=runs, warmup=False)
    recompute_m = measure(
        spark,
        "recompute from scratch",
        lambda: run_analysis(rebuilt, suite),
        runs=runs,
        warmup=False,
    )
    view_m = measure(
        spark,
        "view over 12 months (states only)",
        lambda: metrics_for_view(store, suite, dataset="lineitem", partitions=appended),
        runs=max(runs, 5),
    )
    other = table(
        ["operation", "median s", "Spark jobs", "speed-up vs recompute"],
        [
            [
                replace_m.label,
                replace_m.median,
                replace_m.jobs,
                recompute_m.median / replace_m.median,
            ],
            [recompute_m.label, recompute_m.median, recompute_m.jobs, 1.0],
            [view_m.label, view_m.median, view_m.jobs, recompute_m.median / view_m.median],
        ],
    )
    records += [
        {"operation": m.label, "median_s": m.median, "runs": m.seconds, "jobs": m.jobs}
        for m in (replace_m, recompute_m, view_m)
    ]
    text = (
        f"Appending months one at a time to {len(base_months)} stored months (one measurement per "
        f"month; update = compute the new month's states + whole-table metrics from states):\n\n"
        f"{append_table}\n\nReplacing month {replaced}, and a view, median of {runs} runs "
        f"(view: {max(runs, 5)}):\n\n{other}"
    )
    return text, records
