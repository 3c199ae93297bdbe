"""Predictability on TPC-H lineitem: `l_shipmode` from `l_shipinstruct` and `l_comment`, our
analyzer (DataFrame API, two actions) against a Spark ML Pipeline(Tokenizer, HashingTF,
NaiveBayes) fitted on the same training rows and scored on the same held-out rows; then the
differential update after appending one month (the new month's counts merged with the stored
state) against recomputing over the union. Times are printed, never asserted.

    python -m benchmarks.predictability              # SF1
    python -m benchmarks.predictability --scale 0.01 --runs 1
"""

from __future__ import annotations

import argparse

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from benchmarks._harness import measure, table, timed
from benchmarks.data import lineitem_files, read_lineitem
from checkers.metrics import Predictability, run_analysis
from checkers.metrics.predictability import held_out

TARGET, INPUTS = "l_shipmode", ("l_shipinstruct", "l_comment")
APPENDED = "1998-07"  # a full month; the other months are the data before the append


def spark_ml_f1(lineitem: DataFrame, analyzer: Predictability) -> float:
    """Macro F1 of Spark ML's pipeline on our split (same seed and key)."""
    from pyspark.ml import Pipeline
    from pyspark.ml.classification import NaiveBayes
    from pyspark.ml.evaluation import MulticlassClassificationEvaluator
    from pyspark.ml.feature import HashingTF, StringIndexer, Tokenizer

    key = [F.col(f.name) for f in lineitem.schema.fields]
    rows = lineitem.select(
        F.concat_ws(" ", *INPUTS).alias("text"),
        F.col(TARGET).alias("target"),
        held_out(key, analyzer.seed, analyzer.test_fraction).alias("held_out"),
    )
    pipeline = Pipeline(
        stages=[
            StringIndexer(inputCol="target", outputCol="label"),
            Tokenizer(inputCol="text", outputCol="tokens"),
            HashingTF(inputCol="tokens", outputCol="features", numFeatures=analyzer.num_features),
            NaiveBayes(smoothing=analyzer.smoothing),
        ]
    )
    model = pipeline.fit(rows.where(~F.col("held_out")))
    scored = model.transform(rows.where(F.col("held_out")))
    evaluator = MulticlassClassificationEvaluator(metricName="f1")  # weighted F1 in Spark ML
    return evaluator.evaluate(scored)


def run(spark: SparkSession, scale: float, runs: int) -> str:
    files = lineitem_files(scale)
    lineitem = read_lineitem(spark, "parquet", files["parquet"])
    month = F.date_format("l_shipdate", "yyyy-MM")
    before, appended = lineitem.where(month != APPENDED), lineitem.where(month == APPENDED)
    ours = Predictability(TARGET, list(INPUTS), average="weighted")

    train = "ours: train and score"
    full = measure(spark, train, lambda: run_analysis(lineitem, [ours]), runs=runs)
    ml = measure(spark, "Spark ML Pipeline", lambda: spark_ml_f1(lineitem, ours), runs=runs)
    ours_f1 = run_analysis(lineitem, [ours]).metric(ours).value
    ml_f1 = spark_ml_f1(lineitem, ours)

    stored = run_analysis(before, [ours]).states
    update = measure(
        spark,
        "ours: append one month (merge)",
        lambda: run_analysis(appended, [ours], aggregate_with=stored),
        runs=runs,
    )
    _, _, updated = timed(spark, lambda: run_analysis(appended, [ours], aggregate_with=stored))
    rows = [  # the first row is also the recomputation over the union
        [full.label, full.median, full.jobs, full.actions, ours_f1],
        [ml.label, ml.median, ml.jobs, "", ml_f1],
        [update.label, update.median, update.jobs, update.actions, updated.metric(ours).value],
    ]
    counts = lineitem.count(), appended.count()
    header = (
        f"lineitem SF{scale:g}: {counts[0]:,} rows, appended month {APPENDED}: {counts[1]:,} "
        f"rows; weighted F1 of {TARGET} from {', '.join(INPUTS)}; median of {runs} runs\n\n"
    )
    return header + table(["variant", "seconds", "jobs", "actions", "weighted F1"], rows)


def main() -> None:
    from checkers.spark import spark_session

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    print(run(spark_session(app_name="bench-predictability"), args.scale, args.runs))


if __name__ == "__main__":
    main()
