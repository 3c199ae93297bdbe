"""ExactQuantile: Spark's `percentile` from the frequency table, on hand-computed data."""

from __future__ import annotations

from decimal import Decimal

import pytest
from pyspark.sql import functions as F

from checkers.metrics import (
    Check,
    CheckLevel,
    ConstraintStatus,
    CountDistinct,
    ExactQuantile,
    FileStateStore,
    FrequencyState,
    Histogram,
    InterquartileRange,
    Size,
    VerificationSuite,
    metrics_for_view,
    run_analysis,
)
from checkers.metrics.differential import metrics_from_states
from checkers.metrics.partitioned import analyze_partitions
from tests.metrics.jobs import count_jobs

SCHEMA = "x double, i int, d decimal(10,2), s string, k int"
# x: 1..6 and a NULL; i: 4 4 1 1 1 9 NULL (sorted 1 1 1 4 4 9); d: 0.50 1.50 ... ; k: 1 1 1 2 2 2 2
ROWS = [
    (1.0, 4, 0.5, "a", 1),
    (2.0, 4, 1.5, "b", 1),
    (3.0, 1, 2.5, "c", 1),
    (4.0, 1, 3.5, "d", 2),
    (5.0, 1, 4.5, "e", 2),
    (6.0, 9, 5.5, "f", 2),
    (None, None, None, None, 2),
]


@pytest.fixture(scope="module")
def data(spark):
    rows = [(*r[:2], None if r[2] is None else Decimal(str(r[2])), *r[3:]) for r in ROWS]
    return spark.createDataFrame(rows, SCHEMA)


def test_interpolates_between_neighbours_and_skips_nulls(data) -> None:
    analyzers = {
        ExactQuantile("x", 0.5): 3.5,  # position 2.5 between 3 and 4
        ExactQuantile("x", 0.25): 2.25,  # position 1.25
        ExactQuantile("x", 0.0): 1.0,
        ExactQuantile("x", 1.0): 6.0,
        ExactQuantile("x", 0.9): 5.5,  # position 4.5
        ExactQuantile("i", 0.5): 2.5,  # 1 1 1 | 4 4 9: between 1 and 4
        ExactQuantile("i", 0.8): 4.0,  # position 4.0: the 5th value
        ExactQuantile("i", 0.9): 6.5,  # position 4.5 between 4 and 9
        ExactQuantile("d", 0.5): 3.0,  # decimals: between 2.50 and 3.50
        ExactQuantile("x", 0.5, where="k = 1"): 2.0,
        ExactQuantile("x", 0.5, where="k = 2"): 5.0,  # the NULL row is skipped
    }
    result = run_analysis(data, list(analyzers))
    assert {a: result.metric(a).value for a in analyzers} == analyzers
    assert ExactQuantile("x", 0.5).metric_name == "ExactQuantile-0.5"


def test_agrees_with_sparks_percentile_on_random_data(spark) -> None:
    df = spark.range(997).selectExpr(
        "CASE WHEN id % 13 = 0 THEN NULL ELSE (id * 7919) % 101 - 30.5 END AS v"
    )
    quantiles = (0.0, 0.1, 0.33, 0.5, 0.77, 0.999, 1.0)
    want = df.agg(*[F.percentile("v", q) for q in quantiles]).first()
    result = run_analysis(df, [ExactQuantile("v", q) for q in quantiles])
    for q, expected in zip(quantiles, want, strict=True):
        assert result.metric(ExactQuantile("v", q)).value == pytest.approx(expected, abs=1e-9)


def test_empty_missing_and_wrong_input(data, make_df) -> None:
    nothing = ExactQuantile("x", 0.5, where="k > 5")
    all_null = ExactQuantile("x", 0.5, where="x IS NULL")
    result = run_analysis(
        data,
        [nothing, all_null, ExactQuantile("s", 0.5), ExactQuantile("nope", 0.5), Size()],
    )
    assert "Empty state" in result.metric(nothing).error
    assert "Empty state" in result.metric(all_null).error
    assert "numeric column" in result.metric(ExactQuantile("s", 0.5)).error
    assert "does not exist" in result.metric(ExactQuantile("nope", 0.5)).error
    assert result.metric(Size()).value == 7.0
    empty = make_df([], SCHEMA)
    assert not run_analysis(empty, [ExactQuantile("x", 0.5)]).metric(ExactQuantile("x", 0.5)).ok
    with pytest.raises(ValueError, match="within"):
        ExactQuantile("x", -0.1)


def test_state_is_the_frequency_table_and_merges_exactly(spark, data) -> None:
    median = ExactQuantile("i", 0.5)
    first = run_analysis(data.where("k = 1"), [median])  # i: 4 4 1
    second = run_analysis(data.where("k = 2"), [median])  # i: 1 1 9 NULL
    assert first.metric(median).value == 4.0
    assert second.metric(median).value == 1.0
    merged = first.states[median].merge(second.states[median])
    assert isinstance(merged, FrequencyState)
    combined = run_analysis(data.limit(0), [median], aggregate_with={median: merged})
    assert combined.metric(median).value == 2.5  # the whole column's median


@pytest.mark.classic_only
def test_shares_the_grouping_query_with_the_columns_other_frequency_metrics(spark, data) -> None:
    analyzers = [
        Size(),
        ExactQuantile("i", 0.5),
        ExactQuantile("i", 0.9),
        ExactQuantile("x", 0.25, where="k = 1"),
        CountDistinct("i"),
        Histogram("i"),
    ]
    result, jobs = count_jobs(spark, lambda: run_analysis(data, analyzers))
    assert jobs == result.spark_actions == 2  # the shared scan, the one grouping query
    assert result.metric(ExactQuantile("i", 0.9)).value == 6.5
    assert result.metric(CountDistinct("i")).value == 3.0


def test_check_has_exact_quantile(data) -> None:
    check = (
        Check(CheckLevel.ERROR, "quantiles")
        .has_exact_quantile("x", 0.5, lambda v: v == 3.5)
        .has_exact_quantile("i", 0.5, lambda v: v > 3)
    )
    (result,) = VerificationSuite(data).add_check(check).run().check_results
    statuses = [c.status for c in result.constraint_results]
    assert statuses == [ConstraintStatus.SUCCESS, ConstraintStatus.FAILURE]


def test_stored_partitions_give_exact_quantiles_and_bins_of_any_view(data, tmp_path) -> None:
    analyzers = [
        ExactQuantile("i", 0.5),
        InterquartileRange("x"),
        Histogram("x", bins=(0, 3, 6)),
        CountDistinct("i"),
    ]
    store = FileStateStore(str(tmp_path / "states"))
    for k in (1, 2):
        run_analysis(
            data.where(f"k = {k}"), analyzers, state_store=store, dataset="d", partition=str(k)
        )
    view = metrics_for_view(store, analyzers, dataset="d")
    assert view.metric(ExactQuantile("i", 0.5)).value == 2.5  # 1 1 1 4 4 9
    assert view.metric(InterquartileRange("x")).value == 2.5  # 1..6
    bins = view.metric(Histogram("x", bins=(0, 3, 6))).value["values"]
    assert {k: v["absolute"] for k, v in bins.items()} == {
        "[0.0, 3.0)": 2,
        "[3.0, 6.0]": 4,
        "NullValue": 1,
    }
    one = metrics_for_view(store, analyzers, dataset="d", partitions=["1"])
    assert one.metric(ExactQuantile("i", 0.5)).value == 4.0  # 4 4 1


def test_partition_states_merge_to_the_whole(data) -> None:
    analyzers = [ExactQuantile("i", 0.9), Histogram("n", bins=(0, 5, 10)), InterquartileRange("x")]
    keyed = (
        data.withColumnRenamed("i", "n")
        .withColumn("i", F.col("n"))
        .selectExpr("CAST(k AS STRING) AS part", "*")
    )
    found = analyze_partitions(keyed, analyzers, ["1", "2"], column="part")
    assert not found.errors
    merged = {a: found.states["1"][a].merge(found.states["2"][a]) for a in analyzers}
    metrics, _ = metrics_from_states(analyzers, [merged])
    whole = run_analysis(keyed, analyzers).metrics
    for analyzer in analyzers:
        assert metrics[analyzer].value == whole[analyzer].value, analyzer
    assert metrics[ExactQuantile("i", 0.9)].value == 6.5
