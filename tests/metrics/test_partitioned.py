"""States per partition from one grouped pass: merged, they give the metrics of the whole data;
a partition without rows gets zero states; a bad analyzer is isolated."""

from __future__ import annotations

import math

import pytest
from pyspark.sql import functions as F

from checkers.metrics import (
    ApproxCountDistinct,
    ApproxQuantile,
    Completeness,
    CountDistinct,
    Entropy,
    Histogram,
    Maximum,
    Mean,
    Minimum,
    Size,
    StandardDeviation,
    Uniqueness,
    run_analysis,
)
from checkers.metrics.differential import metrics_from_states
from checkers.metrics.partitioned import analyze_partitions
from tests.metrics.jobs import count_jobs

# Per-partition states come from one grouped aggregation through Arrow. (tests/connect_paths.py)
pytestmark = pytest.mark.connect

COLUMN = "__dq_partition"
SCAN = [
    Size(),
    Completeness("s"),
    Mean("y"),
    StandardDeviation("y", where="x > 1"),
    Minimum("x"),
    Maximum("y"),
    ApproxCountDistinct("s"),
    ApproxQuantile("y", 0.5),
]
FREQUENCY = [Uniqueness(["x"]), CountDistinct(["s"]), Entropy("s"), Histogram("s")]
ROWS = [
    ("a", 1, 1.5, "u"),
    ("a", 2, None, "v"),
    ("a", 2, 3.0, None),
    ("b", 3, 4.5, "u"),
    ("b", 4, -1.0, "w"),
    ("c", 5, 2.0, "w"),
    ("c", 1, 2.0, "u"),
]


@pytest.fixture
def data(make_df):
    return make_df(ROWS, f"{COLUMN} string, x int, y double, s string")


def _merged(states_by_partition, analyzers):
    merged = {}
    for states in states_by_partition.values():
        for analyzer in analyzers:
            state = states[analyzer]
            merged[analyzer] = merged[analyzer].merge(state) if analyzer in merged else state
    return merged


def test_merged_partition_states_give_the_metrics_of_the_whole(data):
    analyzers = SCAN + FREQUENCY
    found = analyze_partitions(data, analyzers, ["a", "b", "c"], column=COLUMN)
    assert not found.errors
    metrics, _ = metrics_from_states(analyzers, [_merged(found.states, analyzers)])
    whole = run_analysis(data, analyzers).metrics
    for analyzer in analyzers:
        assert metrics[analyzer].ok, metrics[analyzer].error
        got, want = metrics[analyzer].value, whole[analyzer].value
        if isinstance(want, float):
            assert math.isclose(got, want, rel_tol=1e-9), analyzer  # type: ignore[arg-type]
        else:
            assert got == want, analyzer
    # the engine merges the partitions' states itself (frequency tables in one scan)
    parts, _ = metrics_from_states(analyzers, found.states.values())
    assert all(parts[a].value == metrics[a].value for a in analyzers)
    # each partition's own metrics too
    a = found.states["a"]
    assert Size().metric_from_state(a[Size()]).value == 3
    alone, _ = metrics_from_states(FREQUENCY, [found.states["b"]])
    assert alone[CountDistinct(["s"])].value == 2


@pytest.mark.classic_only
def test_one_grouped_pass_for_the_counts_whatever_the_number_of_partitions(spark, data):
    def analyze():
        return analyze_partitions(data, SCAN, ["a", "b", "c"], column=COLUMN)

    found, jobs = count_jobs(spark, analyze)
    assert found.spark_actions == 1 and jobs == 1


def test_a_partition_without_rows_gets_zero_states(data):
    found = analyze_partitions(data, [Size(), Mean("y")], ["a", "gone"], column=COLUMN)
    assert set(found.states) == {"a", "gone"}
    assert Size().metric_from_state(found.states["gone"][Size()]).value == 0
    assert not Mean("y").metric_from_state(found.states["gone"][Mean("y")]).ok  # empty state


def test_a_bad_analyzer_is_isolated(data):
    bad = Completeness("missing")
    found = analyze_partitions(
        data.withColumn("z", F.lit(1)), [Size(), bad], ["a", "b"], column=COLUMN
    )
    assert "does not exist" in found.errors[bad]
    assert Size().metric_from_state(found.states["b"][Size()]).value == 2
