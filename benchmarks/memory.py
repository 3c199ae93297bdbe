"""Frequency states never reach the driver: uniqueness and distinct counts of 6 M distinct
(l_orderkey, l_linenumber) pairs and of l_orderkey with a 1 GiB driver. Run as its own process
(`python -m benchmarks.memory PARQUET`) so the driver memory setting applies; prints JSON."""

from __future__ import annotations

import json
import sys
import threading
import time

import psutil
from pyspark.sql import SparkSession

from checkers.metrics import CountDistinct, Uniqueness, run_analysis


def _jvm_peak(stop: threading.Event, peak: list[int]) -> None:
    me = psutil.Process()
    while not stop.is_set():
        for child in me.children(recursive=True):
            try:
                if "java" in child.name():
                    peak[0] = max(peak[0], child.memory_info().rss)
            except psutil.Error:
                pass
        stop.wait(0.2)


def main(path: str) -> None:
    spark = (
        SparkSession.builder.master("local[2]")
        .config("spark.driver.memory", "1g")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "8")
        .getOrCreate()
    )
    df = spark.read.parquet(path)
    analyzers = [
        Uniqueness(["l_orderkey", "l_linenumber"]),
        CountDistinct(["l_orderkey", "l_linenumber"]),
        Uniqueness("l_orderkey"),
        CountDistinct("l_orderkey"),
    ]
    stop, peak = threading.Event(), [0]
    watcher = threading.Thread(target=_jvm_peak, args=(stop, peak), daemon=True)
    watcher.start()
    start = time.perf_counter()
    result = run_analysis(df, analyzers)
    seconds = time.perf_counter() - start
    stop.set()
    watcher.join()
    print(
        json.dumps(
            {
                "seconds": seconds,
                "driver_peak_rss_mib": peak[0] / 2**20,
                "python_rss_mib": psutil.Process().memory_info().rss / 2**20,
                "metrics": {
                    repr(a): (m.value if m.ok else m.error) for a, m in result.metrics.items()
                },
                "spark_actions": result.spark_actions,
            }
        )
    )
    spark.stop()


if __name__ == "__main__":
    main(sys.argv[1])
