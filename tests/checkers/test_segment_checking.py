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


@pytest.mark.classic_only  # Spark jobs counted through the classic status tracker
def test_each_segment_is_judged_against_its_own_history(spark, make_df, tmp_path):
    """Row counts per carrier: UA halves on the third day and is flagged; AA, ten times larger,
    never is, and neither is UA on the second day (against a history pooled with AA's it would
    be). The history costs no Spark job, and the whole dataset's history holds no segment."""
    import datetime as dt

    from checkers.metrics import MetricsRepository, RelativeRateOfChange, ResultKey, Size
    from checkers.metrics.metric_history import MetricHistory
    from checkers.metrics.repository import SEGMENT_TAG
    from tests.metrics.jobs import count_jobs

    repository = MetricsRepository(f"sqlite:///{tmp_path / 'history.db'}")
    check = Check(CheckLevel.WARNING, "volume").has_no_anomalies(
        Size(), RelativeRateOfChange(max_decrease=0.7)
    )

    def checker(day: int, ua_rows: int, *, history: bool = True) -> MetricChecker:
        rows = [("AA", 1.0)] * 100 + [("UA", 1.0)] * ua_rows
        df = make_df(rows, "carrier string, dep_time double")
        key = ResultKey(dt.datetime(2026, 11, day, tzinfo=dt.UTC))
        kept = MetricHistory(repository, key, "flights") if history else None
        return MetricChecker(df, [check], segment_by=["carrier"], history=kept)

    for day in (1, 2):
        assert checker(day, 10).run().failing == 0
    halved = checker(3, 5)
    result, jobs = count_jobs(spark, halved.run)
    assert (result.failing, result.total) == (1, 2)
    (failure,) = result.fetch_sample(10)  # type: ignore[misc]
    assert failure["segment"] == "carrier=UA" and "anomalous" in failure["reason"]
    assert count_jobs(spark, checker(3, 5, history=False).run)[1] == jobs
    ua = repository.query(source_table="flights", tags={SEGMENT_TAG: "carrier=UA"})
    assert [r.value for r in ua if r.name == "Size"] == [10, 10, 5]
    assert repository.query(source_table="flights") == []
