"""`MetricChecker(..., segment_by=...)`: constraints judged per segment, a broken segment found
where the global metric hides it, failing elements as (segment, constraint)."""

from __future__ import annotations

import pytest

from checkers import MetricChecker
from checkers.metrics import Check, CheckLevel


def test_one_broken_carrier_fails_where_the_global_completeness_passes(make_df):
    rows = [("AA", float(i)) for i in range(50)] + [("UA", None), ("UA", 1.0)]
    df = make_df(rows, "carrier string, dep_time double")
    check = Check(CheckLevel.ERROR, "times").has_completeness("dep_time", lambda v: v > 0.9)
    assert MetricChecker(df, [check]).run().failing == 0  # 51 of 52: the whole hides UA
    result = MetricChecker(df, [check], segment_by=["carrier"]).run()
    assert (result.failing, result.total, result.rows) == (1, 2, 52)
    (failure,) = result.fetch_sample(10)  # type: ignore[misc]
    assert failure["segment"] == "carrier=UA"
    assert failure["constraint"] == check.constraints[0].name
    assert failure["value"] == 0.5
    assert result.metrics[f"{check.constraints[0].name} [carrier=AA]"] == 1.0


def test_too_many_segments_is_an_error_not_a_failure(make_df):
    df = make_df([(i, 1.0) for i in range(12)], "id int, x double")
    check = Check(CheckLevel.ERROR, "x").has_completeness("x", lambda v: v == 1.0)
    result = MetricChecker(df, [check], segment_by=["id"], max_segments=10).run()
    assert result.error is not None and "more than 10 segments of id" in result.error


def test_segment_by_refuses_an_unknown_column(make_df):
    df = make_df([(1, 1.0)], "id int, x double")
    check = Check(CheckLevel.ERROR, "x").has_completeness("x", lambda v: v == 1.0)
    with pytest.raises(ValueError, match="segment_by names columns the data lacks"):
        MetricChecker(df, [check], segment_by=["nope"]).run()
