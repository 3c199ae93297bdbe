"""History per partition: partition rows stay out of the whole dataset's history, the
per-partition series is ordered by partition time with the latest save of a partition winning,
and `has_no_anomalies(per_partition=True)` flags a day whose volume dropped while the whole
dataset's size looks normal."""

from __future__ import annotations

import datetime as dt

import pytest

from checkers import MetricChecker
from checkers.metrics import (
    Check,
    CheckLevel,
    ConstraintStatus,
    Metric,
    MetricHistory,
    MetricsRepository,
    OnlineNormal,
    PartitionMetrics,
    ResultKey,
    Size,
    VerificationSuite,
    run_analysis,
)

DAY0 = dt.datetime(2013, 1, 1, tzinfo=dt.UTC)
TAGS = {"pipeline": "flights"}
HISTORY_DAYS = 30


def day(index: int) -> dt.datetime:
    return DAY0 + dt.timedelta(days=index)


def pid(index: int) -> str:
    return f"day={day(index):%Y-%m-%d}"


def size(value: float) -> list[Metric]:
    return [Metric(Size(), value=float(value))]


def daily_volume(index: int) -> int:
    return 1000 + (index * 7) % 41 - 20  # 980..1020, never the same twice in a row


@pytest.fixture
def repository(tmp_path) -> MetricsRepository:
    return MetricsRepository(f"sqlite:///{tmp_path / 'metrics.db'}")


def test_partition_rows_stay_out_of_the_whole_dataset_history(repository):
    for i in range(5):
        repository.save(ResultKey(day(i + 1), TAGS), size(1000 * (i + 1)), source_table="f")
    whole = repository.series(Size(), source_table="f", before=day(10), tags=TAGS)
    history = MetricHistory(repository, ResultKey(day(6), TAGS), "f")
    for i in range(5):
        history.record_partition(pid(i), day(i), size(7))
    history.record_partition("late", None, size(9))  # no partition time: the run's time

    assert repository.series(Size(), source_table="f", before=day(10), tags=TAGS) == whole
    assert [v for _, v in repository.history(Size(), source_table="f", before=day(10))] == [
        1000.0,
        2000.0,
        3000.0,
        4000.0,
        5000.0,
    ]
    assert len(repository.query(source_table="f")) == 11
    assert {r.partition_id for r in repository.query(source_table="f", per_partition=False)} == {
        None
    }
    partitions = repository.query(source_table="f", per_partition=True)
    assert [r.partition_id for r in partitions] == [*(pid(i) for i in range(5)), "late"]
    assert [r.dataset_time for r in partitions] == [*(day(i) for i in range(5)), day(6)]
    assert partitions[0].partition_ts == day(0) and partitions[-1].partition_ts is None


def test_per_partition_series_is_ordered_by_partition_time(repository):
    history = MetricHistory(repository, ResultKey(day(20), TAGS), "f")
    for i in [5, 2, 8, 1]:  # read out of order, as a late partition arrives
        history.record_partition(pid(i), day(i), size(100 + i))
    repository.save(  # no partition time: timed by its dataset time
        ResultKey(day(3), TAGS), size(103), source_table="f", partition_id="undated"
    )
    series = repository.series(Size(), source_table="f", before=day(8), per_partition=True)
    assert series == [(day(i), 100.0 + i, False) for i in [1, 2, 3, 5]]  # day 8: not before
    without = repository.history(
        Size(), source_table="f", before=day(9), per_partition=True, exclude_partition=pid(5)
    )
    assert without == [(day(i), 100.0 + i) for i in [1, 2, 3, 8]]


def test_latest_save_of_a_partition_wins(repository):
    history = MetricHistory(repository, ResultKey(day(10), TAGS), "f")
    history.record_partition(pid(1), day(1), size(500))
    history.record_partition(pid(2), day(2), size(600))
    history.record_partition(pid(1), day(1), size(550))  # day 1 rewritten
    later = MetricHistory(repository, ResultKey(day(3), TAGS), "f")
    later.record_partition("undated", None, size(10))
    # saved again by an earlier-dated run: still the latest save of that partition
    MetricHistory(repository, ResultKey(day(0), TAGS), "f").record_partition(
        "undated", None, size(20)
    )
    series = repository.history(Size(), source_table="f", before=day(10), per_partition=True)
    assert series == [(day(0), 20.0), (day(1), 550.0), (day(2), 600.0)]


def _seed(repository: MetricsRepository) -> int:
    """30 days of history as incremental runs left it: each day's partition, and the whole
    dataset's size the run after. Returns the rows so far."""
    total = 0
    for i in range(HISTORY_DAYS):
        total += daily_volume(i)
        history = MetricHistory(repository, ResultKey(day(i + 1), TAGS), "flights")
        history.record_partition(pid(i), day(i), size(daily_volume(i)))
        repository.save(ResultKey(day(i + 1), TAGS), size(total), source_table="flights")
    return total


def _volume_checks() -> list[Check]:
    return [
        Check(CheckLevel.WARNING, "daily volume").has_no_anomalies(
            Size(), OnlineNormal(), per_partition=True, tags=TAGS
        ),
        Check(CheckLevel.WARNING, "total volume").has_no_anomalies(Size(), OnlineNormal()),
    ]


def _run_day(spark, repository, total: int, rows: int):
    """The run after day 30: it read day 30's partition (`rows` rows), saved its metrics, and
    judges the merged dataset of `total + rows` rows."""
    new = run_analysis(spark.range(rows), [Size()])
    history = MetricHistory(repository, ResultKey(day(HISTORY_DAYS + 1), TAGS), "flights")
    history.record_partition(pid(HISTORY_DAYS), day(HISTORY_DAYS), new.metrics.values())
    judged = history.with_partition(pid(HISTORY_DAYS), day(HISTORY_DAYS), new.metrics)
    result = MetricChecker(spark.range(total + rows), _volume_checks(), history=judged).run()
    return result


def test_a_daily_volume_drop_is_flagged_per_partition_only(spark, repository):
    total = _seed(repository)
    result = _run_day(spark, repository, total, 100)

    assert (result.failing, result.total) == (1, 2)
    daily = "AnomalyConstraint(Size(), OnlineNormal, per partition)"
    (failed,) = result.sample()
    assert failed["constraint"] == daily and failed["value"] == 100
    assert failed["reason"].startswith(f"partition {pid(HISTORY_DAYS)}: value 100")
    assert "is anomalous: outside [" in failed["reason"]
    assert f"from {HISTORY_DAYS} earlier partitions" in failed["reason"]
    assert result.metrics["AnomalyConstraint(Size(), OnlineNormal)"] == total + 100

    # the verdict went on the partition's row, not the whole dataset's: the flagged day leaves
    # the partitions' history, the whole dataset's run stays in its own
    after = day(HISTORY_DAYS + 2)
    partitions = repository.history(
        Size(), source_table="flights", before=after, per_partition=True
    )
    assert len(partitions) == HISTORY_DAYS and 100.0 not in {v for _, v in partitions}
    flagged = repository.series(Size(), source_table="flights", before=after, per_partition=True)
    assert flagged[-1] == (day(HISTORY_DAYS), 100.0, True)
    whole = repository.history(Size(), source_table="flights", before=after)
    assert whole[-1] == (day(HISTORY_DAYS + 1), float(total + 100))


def test_a_normal_day_passes_with_the_bounds_it_used(spark, repository):
    total = _seed(repository)
    rows = daily_volume(HISTORY_DAYS)
    result = _run_day(spark, repository, total, rows)

    assert result.failing == 0
    partition = PartitionMetrics(pid(HISTORY_DAYS), day(HISTORY_DAYS), {Size(): size(rows)[0]})
    report = (
        VerificationSuite(spark.range(total + rows))
        .use_repository(
            repository,
            ResultKey(day(HISTORY_DAYS + 1), TAGS),
            source_table="flights",
            save=False,
            partition=partition,
        )
        .add_checks(_volume_checks())
        .run()
    )
    daily, whole = (r.constraint_results[0] for r in report.check_results)
    assert daily.status is ConstraintStatus.SUCCESS and daily.value == rows
    note = daily.message or ""
    assert note.startswith(f"partition {pid(HISTORY_DAYS)}: within [")
    assert note.endswith(f"from {HISTORY_DAYS} earlier partitions")  # not its own save
    assert whole.value == total + rows
    assert (whole.message or "").endswith(f"from {HISTORY_DAYS} earlier runs")


def test_a_run_that_read_no_new_partition_holds_with_a_note(spark, repository):
    total = _seed(repository)
    check = Check(CheckLevel.ERROR, "daily volume").has_no_anomalies(
        Size(), OnlineNormal(), per_partition=True
    )
    history = MetricHistory(repository, ResultKey(day(HISTORY_DAYS + 1), TAGS), "flights")
    result = MetricChecker(spark.range(total), [check], history=history).run()
    assert result.failing == 0
    report = (
        VerificationSuite(spark.range(total))
        .use_repository(repository, history.key, source_table="flights", save=False)
        .add_check(check)
        .run()
    )
    note = report.check_results[0].constraint_results[0]
    assert note.status is ConstraintStatus.SUCCESS
    assert note.message == "not judged: no new partition was read in this run"

    alone = VerificationSuite(spark.range(3)).add_check(check).run()
    assert alone.check_results[0].constraint_results[0].status is ConstraintStatus.FAILURE
    assert "needs a metrics repository" in alone.report()
