from __future__ import annotations

import datetime as dt

from checkers import AlertLevel, Status
from checks.examples import OperationalTablesFresh
from checks.testing import assert_outcome, evaluate_check
from tests.checks.examples.conftest import NOW


def latest(flights_hours_ago: float, weather_hours_ago: float) -> list[dict[str, object]]:
    now = dt.datetime(2026, 11, 22, 12, 0)
    return [
        {"table_name": "flights", "latest": now - dt.timedelta(hours=flights_hours_ago)},
        {"table_name": "weather", "latest": now - dt.timedelta(hours=weather_hours_ago)},
    ]


def test_target_lags_per_table(spark):
    now = dt.datetime(2026, 11, 22, 12, 0, tzinfo=dt.UTC)
    assert_outcome(OperationalTablesFresh, rows=latest(5, 2), level=AlertLevel.OK, now=now)
    stale = assert_outcome(
        OperationalTablesFresh, rows=latest(5, 4), level=AlertLevel.ERROR, now=now
    )
    assert stale.failing_keys == ("weather",)
    assert_outcome(OperationalTablesFresh, rows=latest(7, 4), level=AlertLevel.CRITICAL, now=now)


def test_reads_the_operational_database(spark, warehouse):
    assert evaluate_check(OperationalTablesFresh, spark=spark, now=NOW).status is Status.PASSED
    a_day_later = NOW + dt.timedelta(days=1, hours=12)
    late = evaluate_check(OperationalTablesFresh, spark=spark, now=a_day_later)
    assert (late.level, late.failing_keys) == (AlertLevel.CRITICAL, ("flights", "weather"))
