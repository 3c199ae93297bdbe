"""A shortened `make demo`: three simulated days of December 2013 through the local scheduler."""

from __future__ import annotations

import datetime as dt

from checkers import AlertLevel, Status
from examples.demo import run_demo


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
        source_table="flights", tags={"series": "daily_flights"})
    assert len(series) == 341 + 3  # seeded January 1 - December 7, then the three runs

    assert "Summary after" in out and "2013-12-10:" in out
    page = result["report"].read_text()
    assert "yesterdays_flights_have_times" in page and "<svg" in page
    assert (root / "state" / "alerts.jsonl").read_text().count("\n") >= 6
