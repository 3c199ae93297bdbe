"""Metrics from metadata on TPC-H lineitem in Parquet and Delta: the metadata-answerable suite
(Size, Completeness of every column, Minimum/Maximum of three integer or decimal columns) and the
BASIC suite, each with and without metadata answers, against the hand-written `df.agg` of the
same expressions in the same process. Run: `python -m benchmarks.lakehouse --scale 1`."""

from __future__ import annotations

import argparse

from benchmarks._harness import benchmark_session, measure_alternating, table
from benchmarks.basic_suite import COLUMNS, basic_suite, hand_written_agg
from benchmarks.data import DATA, lineitem_files
from checkers.metrics import Analyzer, Completeness, Maximum, Minimum, Size, run_analysis
from checkers.parsers import DeltaParser, ParquetParser


def metadata_suite() -> list[Analyzer]:
    bounded = ("l_orderkey", "l_linenumber", "l_quantity")
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    parquet = str(lineitem_files(args.scale)["parquet"])
    sources = {
        "Parquet": ParquetParser(parquet),
        "Delta": DeltaParser(delta_copy(args.scale, parquet)),
    }
    spark = benchmark_session()
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
                runs=args.runs,
            )
            agg = found[-1].median
            rows += [[suite_name, fmt, m.label, m.median, m.jobs, m.median / agg] for m in found]
    headers = ["suite", "source", "variant", "median s", "Spark jobs", "time / df.agg"]
    print(f"TPC-H lineitem SF{args.scale:g}, median of {args.runs} runs:\n")
    print(table(headers, rows))


if __name__ == "__main__":
    main()
