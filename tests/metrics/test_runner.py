"""The runner: shared passes (counted as Spark jobs), deduplication, failure isolation, plans."""

from __future__ import annotations

import pytest

from checkers.metrics import (
    ApproxCountDistinct,
    ApproxQuantile,
    Completeness,
    Compliance,
    CountDistinct,
    Entropy,
    Histogram,
    Maximum,
    Mean,
    Minimum,
    PatternMatch,
    Size,
    SketchPlan,
    StandardDeviation,
    Uniqueness,
    _grouping,
    run_analysis,
)
from checkers.metrics.runner import unresolved
from tests.metrics.jobs import count_jobs

# inputFiles() and runtime-failure isolation go through the Connect server. (tests/connect_paths.py)
pytestmark = pytest.mark.connect

SCAN = [
    Size(),
    Size(where="month = 1"),
    Completeness("dep_time"),
    Completeness("tailnum", where="carrier = 'UA'"),
    Compliance("positive distance", "distance > 0"),
    Compliance("short", "distance < 500", where="origin = 'JFK'"),
    PatternMatch("tailnum", "^N[0-9]"),
    Mean("arr_delay"),
    Minimum("dep_delay", where="month = 6"),
    Maximum("air_time"),
    StandardDeviation("distance"),
]
SKETCHES = [ApproxCountDistinct("tailnum"), ApproxQuantile("arr_delay", 0.5)]
GROUPING = [
    Uniqueness(["carrier", "flight", "time_hour"]),
    CountDistinct("dest"),
    Entropy("dest"),
    Histogram("origin"),
    Uniqueness("tailnum", where="month = 2"),
]  # 4 distinct grouping sets: (carrier, flight, time_hour), (dest), (origin), (tailnum | month=2)


@pytest.fixture(scope="module")
def row_source(spark, flights):
    """About 22,000 flights of every month as a row-wise source (not columnar files)."""
    sample = flights.where("day <= 2")
    return spark.createDataFrame(sample.toPandas(), sample.schema)


@pytest.mark.classic_only
def test_scan_and_grouping_analyzers_run_in_at_most_one_plus_g_jobs(spark, row_source) -> None:
    result, jobs = count_jobs(spark, lambda: run_analysis(row_source, SCAN + SKETCHES + GROUPING))
    groups = 4
    assert jobs <= 1 + groups
    assert jobs == result.spark_actions == 2  # one scan (sketches included), one grouping query
    assert all(m.ok for m in result), [m for m in result if not m.ok]


@pytest.mark.classic_only
def test_on_columnar_files_each_pass_reads_only_its_columns(spark, flights) -> None:
    """Parquet: sketches get a pass of their own (measured faster there): 1 + 1 + 1 jobs."""
    result, jobs = count_jobs(spark, lambda: run_analysis(flights, SCAN + SKETCHES + GROUPING))
    assert jobs == result.spark_actions == 3
    shared, jobs = count_jobs(
        spark,
        lambda: run_analysis(flights, SCAN + SKETCHES + GROUPING, sketch_plan=SketchPlan.SHARED),
    )
    assert jobs == shared.spark_actions == 2
    for analyzer in SCAN + GROUPING:
        got, want = result.metric(analyzer).value, shared.metric(analyzer).value
        assert got == want if isinstance(want, dict) else got == pytest.approx(want)


@pytest.mark.classic_only
def test_many_grouping_columns_cost_one_grouping_job(spark, make_df) -> None:
    columns = [f"c{i}" for i in range(30)]
    df = spark.range(500).selectExpr(*[f"id % {i + 2} AS c{i}" for i in range(30)])
    analyzers = [Uniqueness(c) for c in columns] + [CountDistinct(c) for c in columns]
    result, jobs = count_jobs(spark, lambda: run_analysis(df, analyzers))
    assert jobs == 1
    for i, c in enumerate(columns):
        assert result.metric(CountDistinct(c)).value == float(i + 2)
        assert result.metric(Uniqueness(c)).value == 0.0


@pytest.fixture(scope="module")
def wide_parquet(spark, tmp_path_factory):
    """19 grouped columns of two types as Parquet: more than two stacks of COLUMNAR_STACK."""
    exprs = [f"IF(id % 7 = {i % 7}, NULL, id % {i + 2}) AS c{i:02d}" for i in range(12)]
    exprs += [f"CAST(id % {i + 3} AS STRING) AS s{i}" for i in range(7)]
    path = str(tmp_path_factory.mktemp("wide") / "wide")
    spark.range(700).selectExpr(*exprs).write.parquet(path)
    columnar = spark.read.parquet(path)
    assert len(columnar.columns) > 2 * _grouping.COLUMNAR_STACK
    analyzers = [a for c in columnar.columns for a in (Uniqueness(c), CountDistinct(c))]
    analyzers += [CountDistinct(c, where="c00 < 1") for c in columnar.columns[::3]]
    return columnar, analyzers


def test_on_columnar_files_stacks_of_a_few_columns_give_the_same_metrics(
    spark, wide_parquet
) -> None:
    """Parquet: the stacked columns are split into stacks of COLUMNAR_STACK (unioned in one
    query); the metrics equal those of the same rows as a row-wise source (one stack)."""
    columnar, analyzers = wide_parquet
    frame = columnar.toPandas()
    result = run_analysis(columnar, analyzers)
    expected = run_analysis(spark.createDataFrame(frame, columnar.schema), analyzers)
    for analyzer in analyzers:
        assert result.metric(analyzer).value == expected.metric(analyzer).value, analyzer
    for column in columnar.columns:
        assert result.metric(CountDistinct(column)).value == frame[column].nunique()
        unique = (frame[column].value_counts() == 1).sum() / frame[column].notna().sum()
        assert result.metric(Uniqueness(column)).value == pytest.approx(unique)
    for column in columnar.columns[::3]:
        filtered = frame[frame["c00"] < 1][column].nunique()
        assert result.metric(CountDistinct(column, where="c00 < 1")).value == filtered


@pytest.mark.classic_only
def test_on_columnar_files_the_stacks_share_one_grouping_job(spark, wide_parquet) -> None:
    columnar, analyzers = wide_parquet
    result, jobs = count_jobs(spark, lambda: run_analysis(columnar, analyzers))
    assert jobs == result.spark_actions == 1


def test_duplicates_collapse_and_results_keep_request_order(flights) -> None:
    analyzers = [Size(), Completeness("dep_time"), Size(), Completeness("dep_time")]
    result = run_analysis(flights, analyzers)
    assert list(result.metrics) == [Size(), Completeness("dep_time")]
    assert result.metric(Size()).value == 336_776.0


def test_real_missing_values_in_flights(flights) -> None:
    result = run_analysis(flights, [Completeness("dep_time"), Completeness("tailnum")])
    assert result.metric(Completeness("dep_time")).value == pytest.approx(1 - 8255 / 336_776)
    assert result.metric(Completeness("tailnum")).value == pytest.approx(1 - 2512 / 336_776)


def test_a_runtime_failure_is_isolated_to_its_analyzer(flights) -> None:
    # Resolves fine but fails while running under ANSI mode (a string that is not a number).
    failing = Compliance("bad cast", "CAST(carrier AS INT) > 0")
    result = run_analysis(flights, [failing, Size(), Mean("distance")])
    assert not result.metric(failing).ok
    assert "bad cast" in result.metric(failing).error
    assert result.metric(Size()).value == 336_776.0
    assert result.metric(Mean("distance")).ok


UNRESOLVED = [
    Completeness("no_such_column"),  # the schema says so
    Compliance("no such column", "no_such_column > 0"),  # Spark's analysis says so
    Compliance("bad cast", "CAST(carrier AS INT) > 0"),  # resolves: fails only when it runs
    Size(),
]


def test_unresolved_names_what_cannot_run_whatever_the_rows(flights) -> None:
    found = unresolved(flights, UNRESOLVED)
    assert set(found) == set(UNRESOLVED[:2])
    assert all("no_such_column" in why for why in found.values())


@pytest.mark.classic_only
def test_unresolved_runs_no_spark_job(spark, flights) -> None:
    found, jobs = count_jobs(spark, lambda: unresolved(flights, UNRESOLVED))
    assert len(found) == 2 and jobs == 0


def test_metric_lookup_of_an_unknown_analyzer_says_so(flights) -> None:
    result = run_analysis(flights, [Size()])
    with pytest.raises(KeyError, match="not part of this analysis"):
        result.metric(Completeness("dep_time"))
    with pytest.raises(ValueError, match="Empty state"):
        run_analysis(flights.limit(0), [Mean("distance")]).value(Mean("distance"))


def test_storing_states_needs_dataset_and_partition(flights) -> None:
    from checkers.metrics import InMemoryStateStore

    with pytest.raises(ValueError, match="dataset= and partition="):
        run_analysis(flights, [Size()], state_store=InMemoryStateStore())
