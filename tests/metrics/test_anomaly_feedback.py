"""What people say about a metric's history reaches every anomaly strategy: `expected` periods
train and widen what is accepted, `exclude` periods and maintenance windows leave points out of
training, `baseline` forgets what came before; `sensitivity` scales a strategy's width and
`min_change` is a floor below which nothing alerts. Judged through `judge_anomaly` on a real
SQLite metrics repository (no Spark: the metrics are given)."""

from __future__ import annotations

import datetime as dt

import pytest

from checkers.engine_tables import metrics_table
from checkers.metrics import (
    AbsoluteChange,
    BatchNormal,
    Check,
    CheckLevel,
    Metric,
    MetricHistory,
    MetricsRepository,
    OnlineNormal,
    RelativeRateOfChange,
    ResultKey,
    Seasonal,
    SimpleThreshold,
    Size,
)
from checkers.metrics.annotations import (
    BASELINE,
    EXCLUDE,
    EXPECTED,
    Feedback,
    Period,
    SeriesPoint,
    add_period,
)
from checkers.metrics.check import AnomalySpec
from checkers.metrics.metric_history import judge_anomaly
from checkers.metrics.sensitivity import sensitivity_problem, tuned

DAY0 = dt.datetime(2026, 10, 1, tzinfo=dt.UTC)
CHECK = "orders_volume"


def day(index: int) -> dt.datetime:
    return DAY0 + dt.timedelta(days=index)


@pytest.fixture
def repository(tmp_path) -> MetricsRepository:
    return MetricsRepository(f"sqlite:///{tmp_path / 'metrics.db'}")


def seed(repository: MetricsRepository, values: list[float]) -> None:
    for i, value in enumerate(values):
        repository.save(ResultKey(day(i)), [Metric(Size(), value=value)], source_table="orders")


def flag(repository: MetricsRepository, at: dt.datetime) -> None:
    """The point at `at` failed its anomaly constraint (as the run that saved it said)."""
    t = metrics_table
    with repository.engine.begin() as connection:
        connection.execute(
            t.update().where(t.c.dataset_time == at).values(constraint_status="Failure")
        )


def annotate(repository: MetricsRepository, period: Period) -> None:
    with repository.engine.begin() as connection:
        add_period(connection, CHECK, period, created_by="ana", now=day(100))


def judge(repository, strategy, value, at, **history_options):  # type: ignore[no-untyped-def]
    history = MetricHistory(
        repository, ResultKey(day(at)), "orders", check=CHECK, **history_options
    )
    spec = AnomalySpec(strategy)
    return judge_anomaly(Size(), Metric(Size(), value=float(value)), spec, history)


def normal(i: int) -> float:
    return 100.0 + (i * 3) % 7 - 3  # 97..103, weekly-ish


STRATEGIES = [
    SimpleThreshold(lower=90, upper=110),
    AbsoluteChange(max_decrease=-20, max_increase=20),
    RelativeRateOfChange(max_decrease=0.8, max_increase=1.2),
    OnlineNormal(),
    BatchNormal(),
    Seasonal(period=7),
]


@pytest.mark.parametrize("strategy", STRATEGIES, ids=lambda s: type(s).__name__)
def test_every_strategy_accepts_a_value_annotated_expected(repository, strategy):
    history = [normal(i) for i in range(28)] + [300.0]  # day 28: the planned backfill
    seed(repository, history)
    flag(repository, day(28))  # it alerted that day: left out of training
    reason, _ = judge(repository, strategy, 300, 29)
    assert reason and "is anomalous" in reason  # without the annotation: it alerts

    annotate(repository, Period(EXPECTED, day(28), day(29), "backfill"))
    reason, note = judge(repository, strategy, 300, 29)
    assert reason is None  # trained on (change strategies) or within the expected values
    assert "from 29 earlier runs" in note or "1 value(s) marked expected" in note


def test_excluded_points_do_not_train(repository):
    # five days of an incident (not flagged: say the check was not running) inflate the history
    seed(repository, [normal(i) for i in range(20)] + [1000.0] * 5)
    assert judge(repository, BatchNormal(), 1000, 25)[0] is None  # trained on the incident
    annotate(repository, Period(EXCLUDE, day(20), day(25), "the incident"))
    reason, _ = judge(repository, BatchNormal(), 1000, 25)
    assert reason and "from 20 earlier runs" in reason


def test_excluded_outage_is_not_the_previous_point(repository):
    seed(repository, [normal(i) for i in range(20)] + [0.0, 0.0])  # a two-day outage
    change = AbsoluteChange(max_decrease=-20, max_increase=20)
    assert judge(repository, change, 100, 22)[0]  # +100 against the outage's zero
    annotate(repository, Period(EXCLUDE, day(20), day(22), "outage"))
    assert judge(repository, change, 100, 22)[0] is None


def test_seasonal_keeps_the_calendar_across_an_excluded_week(repository):
    weekly = [100.0, 100.0, 100.0, 100.0, 100.0, 20.0, 20.0]  # quiet weekends
    seed(repository, [weekly[i % 7] * (5 if 21 <= i < 28 else 1) for i in range(33)])
    annotate(repository, Period(EXCLUDE, day(21), day(28), "double counting"))
    assert judge(repository, Seasonal(period=7), 20, 33)[0] is None  # a quiet Saturday
    reason, _ = judge(repository, Seasonal(period=7), 100, 33)  # a busy Saturday
    assert reason and "from 26 earlier runs" in reason  # 33 runs, the excluded week's 7 gaps


def test_a_baseline_forgets_the_old_normal(repository):
    seed(repository, [1000.0 + normal(i) for i in range(20)] + [normal(i) for i in range(10)])
    assert judge(repository, BatchNormal(), 1000, 30)[0] is None  # the old level still trains
    annotate(repository, Period(BASELINE, day(20), None, "the new pricing"))
    reason, _ = judge(repository, BatchNormal(), 1000, 30)
    assert reason and "from 10 earlier runs" in reason


def test_maintenance_windows_exclude_their_points_and_their_runs(repository):
    seed(repository, [normal(i) for i in range(20)] + [1000.0] * 5)
    sundays = lambda t: "maintenance" if day(20) <= t < day(25) else None  # noqa: E731
    reason, _ = judge(repository, BatchNormal(), 1000, 25, excluded_when=sundays)
    assert reason and "from 20 earlier runs" in reason
    reason, note = judge(repository, BatchNormal(), 1000, 24, excluded_when=sundays)
    assert reason is None and "in a maintenance window" in note


def test_a_run_inside_an_annotated_period_is_not_judged(repository):
    seed(repository, [normal(i) for i in range(20)])
    annotate(repository, Period(EXPECTED, day(20), day(21), "the migration"))
    reason, note = judge(repository, BatchNormal(), 5000, 20)
    assert reason is None and note == "not judged: annotated expected: the migration"


def test_sensitivity_scales_the_width(repository):
    seed(repository, [normal(i) for i in range(28)])
    strategy = BatchNormal(lower_factor=3.0, upper_factor=3.0)  # std 2.1: medium allows ~6.3
    value = 100 + 7.5  # outside medium (3 std), inside low (4.5 std)
    assert judge(repository, strategy, value, 28)[0]
    assert judge(repository, strategy, value, 28, sensitivity="low")[0] is None
    assert judge(repository, strategy, 100 + 5, 28, sensitivity="high")[0]  # 2 std
    assert judge(repository, strategy, 100 + 5, 28)[0] is None


def test_min_change_is_a_floor(repository):
    seed(repository, [normal(i) for i in range(28)])
    assert judge(repository, BatchNormal(), 120, 28)[0]
    reason, note = judge(repository, BatchNormal(), 120, 28, min_change=50)
    assert reason is None and "less than min_change=50" in note
    assert judge(repository, BatchNormal(), 151, 28, min_change=50)[0]


def test_tuned_parameters_are_documented_scales():
    assert tuned(OnlineNormal(), "low") == OnlineNormal(lower_factor=4.5, upper_factor=4.5)
    assert tuned(Seasonal(), "high") == Seasonal(
        factor=4.0 * 2 / 3, min_relative_change=0.1 * 2 / 3
    )
    rate = tuned(RelativeRateOfChange(max_decrease=0.8, max_increase=1.2), "low")
    assert rate == RelativeRateOfChange(
        max_decrease=pytest.approx(0.7), max_increase=pytest.approx(1.3)
    )
    assert tuned(SimpleThreshold(upper=5), "high") == SimpleThreshold(upper=5)


def test_bad_settings_are_refused_when_the_check_is_built():
    with pytest.raises(ValueError, match="sensitivity must be one of low, medium, high"):
        Check(CheckLevel.WARNING, "v").has_no_anomalies(Size(), OnlineNormal(), sensitivity="hi")
    with pytest.raises(ValueError, match="min_change must be a number >= 0"):
        Check(CheckLevel.WARNING, "v").has_no_anomalies(Size(), OnlineNormal(), min_change=-1)
    assert sensitivity_problem("high", 10) is None


def test_training_in_one_place():
    points = [
        SeriesPoint(day(0), 1.0),
        SeriesPoint(day(1), 2.0, failed=True),
        SeriesPoint(day(2), 3.0, failed=True, expected=True),
        SeriesPoint(day(3), 4.0),
        SeriesPoint(day(4), 5.0),
    ]
    feedback = Feedback(
        (
            Period(BASELINE, day(1)),
            Period(EXCLUDE, day(3), day(4)),
            Period(EXPECTED, day(4), day(5)),
        )
    )
    kept = feedback.training(points, day(9), exclude_failed=True, keeps_positions=False)
    assert (kept.history, kept.expected, kept.skip_reason) == ([3.0, 5.0], [3.0, 5.0], None)
    gaps = feedback.training(points, day(4), exclude_failed=True, keeps_positions=True)
    assert gaps.history == [None, 3.0, None, 5.0]
    assert gaps.skip_reason == "not judged: annotated expected"
