"""Run every benchmark and rewrite the results section of benchmarks/README.md.

python -m benchmarks.run            # TPC-H SF1, median of 3 runs (about half an hour)
python -m benchmarks.run --quick    # SF0.1, one run: checks the benchmarks themselves
python -m benchmarks.run --only faults   # the fault catalogue (benchmarks/faults): no TPC-H
python -m benchmarks.run --only incremental   # a year of daily partitions (--quick: 40 days)

The results section of the README is rewritten only when a TPC-H benchmark ran; the fault
catalogue and the incremental checks keep sections of their own there.
"""

from __future__ import annotations

import argparse
import json
import platform
import subprocess
import sys
import time
from pathlib import Path

from benchmarks import basic_suite, data, differential, grouping, key_set
from benchmarks._harness import benchmark_session

README = Path(__file__).parent / "README.md"
BEGIN, END = "<!-- results:begin -->", "<!-- results:end -->"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--quick", action="store_true")
    parser.add_argument(
        "--only",
        nargs="*",
        default=["basic", "key_set", "grouping", "differential", "memory"],
        help="any of: basic key_set grouping differential memory faults incremental",
    )
    parser.add_argument("--no-readme", action="store_true", help="print only")
    args = parser.parse_args()
    scale, runs, wide_rows = (0.1, 1, 100_000) if args.quick else (1.0, 3, 1_000_000)

    tpch = set(args.only) - {"faults", "incremental"}
    if tpch:
        spark = benchmark_session()
        files = data.lineitem_files(scale)
    sections, records = [], {}
    started = time.time()
    if "basic" in args.only:
        sources = {fmt: data.read_lineitem(spark, fmt, path) for fmt, path in files.items()}
        text, records["basic"] = basic_suite.run(spark, sources, runs)
        sections.append(("BASIC suite", text))
        print(text, flush=True)
    if "key_set" in args.only:
        sources = {fmt: data.read_lineitem(spark, fmt, path) for fmt, path in files.items()}
        text, records["key_set"] = key_set.run(spark, sources, runs)
        sections.append(("One multi-column key set", text))
        print(text, flush=True)
    if "grouping" in args.only:
        wide = data.wide_table(spark, wide_rows)
        wide_sources = {
            "parquet": data.read_wide(spark, "parquet", wide),
            "csv": data.read_wide(spark, "csv", data.wide_csv(spark, wide)),
        }
        text, records["grouping"] = grouping.run(spark, wide_sources, runs)
        sections.append(("Grouping metrics on a wide table", text))
        print(text, flush=True)
    if "differential" in args.only:
        by_month = data.lineitem_by_month(spark, scale, files["parquet"])
        text, records["differential"] = differential.run(spark, by_month, runs)
        sections.append(("Differential updates", text))
        print(text, flush=True)
    if tpch:
        spark.stop()
    if "memory" in args.only:
        out = subprocess.run(
            [sys.executable, "-m", "benchmarks.memory", str(files["parquet"])],
            check=True,
            capture_output=True,
            text=True,
        )
        result = json.loads(out.stdout.strip().splitlines()[-1])
        records["memory"] = result
        metrics = "\n".join(f"| {k} | {v} |" for k, v in result["metrics"].items())
        text = (
            f"spark.driver.memory=1g, {result['seconds']:.1f} s, {result['spark_actions']} Spark "
            f"actions, peak driver (JVM) RSS {result['driver_peak_rss_mib']:.0f} MiB, Python "
            f"process RSS {result['python_rss_mib']:.0f} MiB:\n\n"
            f"| analyzer | value |\n|---|---|\n{metrics}"
        )
        sections.append(("Memory: frequency states stay in Spark", text))
        print(text, flush=True)
    if "incremental" in args.only:  # its own process and Spark application, like the faults
        days = ["--days", "40"] if args.quick else []
        out = subprocess.run(
            [sys.executable, "-m", "benchmarks.incremental", *days],
            check=True,
            stdout=subprocess.PIPE,
            text=True,
        )
        sections.append(("Incremental checks", out.stdout.strip()))
        print(out.stdout, flush=True)
    if "faults" in args.only:  # its own process, which starts Spark only where a fault needs it
        out = subprocess.run(
            [sys.executable, "-m", "benchmarks.faults"], check=True, capture_output=True, text=True
        )
        sections.append(("Fault catalogue", out.stdout.strip()))
        print(out.stdout, flush=True)

    header = (
        f"Measured {time.strftime('%Y-%m-%d')} on {platform.machine()}, 2 cores, local[2], "
        f"{f'TPC-H SF{scale:g} lineitem, ' if tpch else ''}{time.time() - started:.0f} s in all "
        f"(`python -m benchmarks.run{' --quick' if args.quick else ''}`)."
    )
    body = header + "\n\n" + "\n\n".join(f"### {title}\n\n{text}" for title, text in sections)
    (Path(__file__).parent / "out").mkdir(exist_ok=True)
    (Path(__file__).parent / "out" / "results.json").write_text(
        json.dumps(records, indent=2, default=str)
    )
    if tpch and not args.no_readme and README.exists():
        readme = README.read_text()
        if BEGIN in readme and END in readme:
            before, rest = readme.split(BEGIN, 1)
            after = rest.split(END, 1)[1]
            README.write_text(f"{before}{BEGIN}\n{body}\n{END}{after}")


if __name__ == "__main__":
    main()
