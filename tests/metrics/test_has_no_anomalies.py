"""`has_no_anomalies` end to end: the real 2013 daily flight counts go to the metrics repository
day by day and are judged with a weekly-seasonal strategy, the weeks around a halved day through
VerificationSuite over the data."""

from __future__ import annotations

import datetime as dt

import pytest
from pyspark.sql import functions as F

from checkers.metrics import (
    Check,
    CheckLevel,
    ConstraintStatus,
    Metric,
    MetricsRepository,
    OnlineNormal,
    ResultKey,
    Seasonal,
    Size,
    VerificationSuite,
)
from checkers.metrics.metric_history import MetricHistory
from checkers.metrics.verification import VerificationResult, evaluate_check, worst_status

FIRST_CHECKED = (
    28  # day of year (0-based) from which runs go through the suite (4 weeks of history)
)
HALVED = 200


def day_key(index: int) -> ResultKey:
    return ResultKey(
        dt.datetime(2013, 1, 1, tzinfo=dt.UTC) + dt.timedelta(days=index),
        {"pipeline": "flights-daily"},
    )


#: Days that run through VerificationSuite over the data (a Spark job each); the other days take
#: the suite's own judgement and recording on the day's count, known from one grouped pass.
OVER_THE_DATA = range(HALVED - 7, HALVED + 8)


def judged_on_count(check: Check, repository: MetricsRepository, day: int, count: int):
    """What `VerificationSuite(...).use_repository(...).run()` does after its Spark pass: judge the
    day's Size against the history, and record the metrics and verdict (a flagged day is kept
    out of later days' history)."""
    history = MetricHistory(repository, day_key(day), "flights")
    metrics = {Size(): Metric(Size(), value=float(count))}
    checked = evaluate_check(check, metrics, history)
    history.record(VerificationResult(worst_status([checked]), [checked], metrics))
    return checked.constraint_results[0]


@pytest.mark.slow
def test_weekly_seasonal_flags_a_halved_day(spark, flights, tmp_path):
    repository = MetricsRepository(f"sqlite:///{tmp_path / 'metrics.db'}")
    daily = flights.withColumn("doy", F.dayofyear(F.make_date("year", "month", "day")) - 1).cache()
    counts = {r.doy: r["count"] for r in daily.groupBy("doy").count().collect()}
    for day in range(FIRST_CHECKED):  # history, one save per day as a daily job would
        repository.save(
            day_key(day), [Metric(Size(), value=float(counts[day]))], source_table="flights"
        )
    statuses = {}
    for day in range(FIRST_CHECKED, 365):
        check = Check(CheckLevel.WARNING, "daily volume").has_no_anomalies(
            Size(), Seasonal(period=7), tags={"pipeline": "flights-daily"}
        )
        if day not in OVER_THE_DATA:
            statuses[day] = judged_on_count(check, repository, day, counts[day])
            continue
        data = daily.where(F.col("doy") == day)
        if day == HALVED:
            data = data.limit(counts[day] // 2)
        result = (
            VerificationSuite(data)
            .use_repository(repository, day_key(day), source_table="flights")
            .add_check(check)
            .run()
        )
        assert result.metrics[Size()].value == (counts[day] // 2 if day == HALVED else counts[day])
        statuses[day] = result.check_results[0].constraint_results[0]
    daily.unpersist()

    halved = statuses[HALVED]
    assert halved.status is ConstraintStatus.FAILURE
    assert "is anomalous: outside [" in halved.message and "earlier runs" in halved.message
    false_alarms = [
        d for d, c in statuses.items() if d != HALVED and c.status is ConstraintStatus.FAILURE
    ]
    assert len(false_alarms) < 0.05 * (365 - FIRST_CHECKED)
    assert "within [" in statuses[HALVED + 1].message
    history = repository.history(
        Size(),
        source_table="flights",
        before=day_key(365).dataset_time,
        tags={"pipeline": "flights-daily"},
    )
    assert day_key(HALVED).dataset_time not in {t for t, _ in history}  # flagged run left out
    assert len(history) == 365 - 1 - len(false_alarms)


def test_online_normal_through_the_suite_and_without_a_repository(spark, tmp_path):
    repository = MetricsRepository(f"sqlite:///{tmp_path / 'metrics.db'}")
    for day, size in enumerate([10, 11, 9, 10, 10, 11, 9, 10, 10, 10]):
        repository.save(day_key(day), [Metric(Size(), value=float(size))], source_table="t")
    big = spark.range(40)
    check = Check(CheckLevel.ERROR, "volume").has_no_anomalies(Size(), OnlineNormal())
    flagged = (
        VerificationSuite(big)
        .use_repository(repository, day_key(10), source_table="t")
        .add_check(check)
        .run()
    )
    assert flagged.check_results[0].constraint_results[0].status is ConstraintStatus.FAILURE
    alone = VerificationSuite(big).add_check(check).run()
    assert "needs a metrics repository" in alone.report()


@pytest.mark.parametrize("strategy", [Seasonal(period=7)])
def test_too_little_history_is_not_judged(spark, tmp_path, strategy):
    repository = MetricsRepository(f"sqlite:///{tmp_path / 'metrics.db'}")
    check = Check(CheckLevel.ERROR, "volume").has_no_anomalies(Size(), strategy)
    result = (
        VerificationSuite(spark.range(3))
        .use_repository(repository, day_key(0), source_table="t")
        .add_check(check)
        .run()
    )
    constraint = result.check_results[0].constraint_results[0]
    assert constraint.status is ConstraintStatus.SUCCESS
    assert "from 0 earlier runs" in constraint.message
