"""One multi-column key set on TPC-H lineitem: Uniqueness, Distinctness and CountDistinct of
(l_orderkey, l_linenumber), on CSV and on Parquet. The engine (a plain group-by for a lone set)
against itself as it was (GROUPING SETS for that one set), and the same counts by a hand-written
group-by and a hand-written one-set GROUPING SETS query.

python -m benchmarks.key_set --scale 1 --runs 5   # alone; `benchmarks.run` runs it at SF1, 3 runs
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from unittest import mock

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from benchmarks import data
from benchmarks._harness import benchmark_session, measure_alternating, table
from checkers.metrics import (
    Analyzer,
    CountDistinct,
    Distinctness,
    Uniqueness,
    _grouping,
    run_analysis,
)

KEY = ("l_orderkey", "l_linenumber")


def _counts(frequencies: DataFrame) -> None:
    """Keyed rows, distinct keys and keys seen once: what the three metrics need."""
    count, keyed = F.col("n"), F.col(KEY[0]).isNotNull() | F.col(KEY[1]).isNotNull()
    frequencies.agg(
        F.sum(F.when(keyed, count)),
        F.count(F.when(keyed, F.lit(1))),
        F.count(F.when(keyed & (count == 1), F.lit(1))),
    ).collect()


def hand_written_group_by(df: DataFrame) -> None:
    _counts(df.groupBy(*KEY).agg(F.count(F.lit(1)).alias("n")))


def hand_written_grouping_sets(df: DataFrame) -> None:
    _counts(
        df.groupingSets([list(KEY)], *KEY).agg(
            F.count(F.lit(1)).alias("n"), F.grouping_id().alias("g")
        )
    )


@contextmanager
def grouping_sets_for_a_lone_set() -> Iterator[None]:
    """The engine as it was: a lone multi-column set through GROUPING SETS (this benchmark has
    no single-column set, the other caller of the plain group-by)."""

    def as_before(df: DataFrame, only: _grouping.GroupingSet, names: Sequence[str]) -> DataFrame:
        return _grouping._grouping_sets_table(df, [only], {only.set_id: tuple(names)})

    with mock.patch.object(_grouping, "_group_by_table", as_before):
        yield


def engine_before(df: DataFrame, analyzers: list[Analyzer]) -> object:
    with grouping_sets_for_a_lone_set():
        return run_analysis(df, analyzers)


def run(
    spark: SparkSession, sources: dict[str, DataFrame], runs: int
) -> tuple[str, list[dict[str, object]]]:
    analyzers: list[Analyzer] = [Uniqueness(KEY), Distinctness(KEY), CountDistinct(KEY)]
    rows, records = [], []
    for fmt, df in sources.items():
        found = measure_alternating(
            spark,
            {
                "engine (plain group-by)": lambda df=df: run_analysis(df, analyzers),
                "engine, GROUPING SETS (before)": lambda df=df: engine_before(df, analyzers),
                "hand-written group-by": lambda df=df: hand_written_group_by(df),
                "hand-written GROUPING SETS (before)": lambda df=df: hand_written_grouping_sets(df),
            },
            runs=runs,
        )
        plain = found[2]
        for m in found:
            rows.append([fmt, m.label, m.median, m.jobs, m.actions or "", m.median / plain.median])
            records.append(
                {"format": fmt, "variant": m.label, "median_s": m.median, "runs": m.seconds}
            )
    text = table(
        ["source", "variant", "median s", "Spark jobs", "engine actions", "x hand-written"], rows
    )
    return (
        f"Uniqueness + Distinctness + CountDistinct of ({', '.join(KEY)}), median of {runs} runs, "
        f"the variants measured in turns:\n\n{text}",
        records,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--scale", type=float, default=1.0, help="TPC-H scale factor")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    spark = benchmark_session()
    files = data.lineitem_files(args.scale)
    sources = {fmt: data.read_lineitem(spark, fmt, path) for fmt, path in files.items()}
    text, _ = run(spark, sources, args.runs)
    print(f"TPC-H SF{args.scale:g} lineitem. {text}")
    spark.stop()


if __name__ == "__main__":
    main()
