from __future__ import annotations

import datetime as dt

from checkers import AlertLevel, Status
from checkers.metrics import Metric, MetricsRepository, Size
from checks.examples import FlightsDailyVolume
from checks.examples.volume import day_key
from checks.testing import assert_outcome

NOW = dt.datetime(2013, 12, 11, 7, 0, tzinfo=dt.UTC)  # judges December 10


def flights(count: int) -> list[dict[str, object]]:
    return [{"id": i, "year": 2013, "month": 12, "day": 10} for i in range(count)]


def test_volume_against_its_weekly_history(spark, tmp_path, monkeypatch):
    url = f"sqlite:///{tmp_path / 'dq.db'}"
    monkeypatch.setenv("DQ_DATABASE_URL", url)
    # no history yet: not judged
    assert_outcome(FlightsDailyVolume, rows=flights(50), status=Status.PASSED, now=NOW)
    repository = MetricsRepository(url)
    for back in range(1, 43):  # six weeks; weekends quieter
        day = dt.date(2013, 12, 10) - dt.timedelta(days=back)
        volume = 60 if day.weekday() >= 5 else 90 + back % 3
        repository.save(day_key(day), [Metric(Size(), value=float(volume))], source_table="flights")
    assert_outcome(FlightsDailyVolume, rows=flights(91), status=Status.PASSED, now=NOW)
    halved = assert_outcome(FlightsDailyVolume, rows=flights(45), level=AlertLevel.WARNING, now=NOW)
    assert "is anomalous" in halved.sample[0]["reason"]
