"""Acceptance 6 (issue 26): `dq backtest` on the demo's volume anomaly check (a small history
built in the project database, not the whole demo) prints, for each sensitivity, the alerts a
week it would have raised and, with `--inject`, the recall on each synthetic fault kind; a day
annotated as expected no longer counts as an alert. Real SQLite, the CLI in-process."""

from __future__ import annotations

import datetime as dt
import json

import pytest

from checkers.metrics import Metric, MetricsRepository, Size
from checks.examples.volume import day_key
from scheduling.cli import main
from scheduling.cli.exits import EXIT_OK, EXIT_USAGE
from scheduling.schema import project_database

LAST = dt.date(2013, 12, 10)
HOLIDAY = dt.date(2013, 11, 28)  # Thanksgiving: a third of the usual flights
FAULTS = ["volume drop 50%", "spike", "null burst", "missing partition", "distribution shift"]


@pytest.fixture
def demo_history(tmp_path, monkeypatch):
    url = f"sqlite:///{tmp_path / 'dq.db'}"
    monkeypatch.setenv("DQ_DATABASE_URL", url)
    monkeypatch.setenv("DQ_CHECKS", "checks.examples")
    monkeypatch.setenv("DQ_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("DQ_CONFIG", str(tmp_path / "none.toml"))
    engine = project_database(url)
    repository = MetricsRepository(engine)
    for back in range(70):  # ten weeks; weekends quieter
        day = LAST - dt.timedelta(days=back)
        volume = 600 if day.weekday() >= 5 else 900 + (back * 7) % 23
        if day == HOLIDAY:
            volume = 300
        repository.save(day_key(day), [Metric(Size(), value=float(volume))], source_table="flights")
    yield
    engine.dispose()


def backtest(capsys, *options: str) -> tuple[int, str]:
    capsys.readouterr()
    code = main(["backtest", "flights_daily_volume", "--at", "2013-12-11T07:00:00", *options])
    return code, capsys.readouterr().out


def test_backtest_prints_alerts_per_week_and_recall_per_fault(spark, demo_history, capsys):
    code, out = backtest(capsys, "--inject")
    assert code == EXIT_OK, out
    lines = out.splitlines()
    assert lines[0].startswith(
        "flights_daily_volume: AnomalyConstraint(Size(), Seasonal): 70 points, 2013-10-02 .. "
        "2013-12-10"
    )
    assert "alerts/week" in lines[1] and all(f"recall {f}" in lines[1] for f in FAULTS)
    assert [line.split()[0] for line in lines[2:5]] == ["low", "medium", "high"]
    assert lines[3].split()[1] == "*"  # the check's own sensitivity

    code, out = backtest(capsys, "--inject", "--json")
    [report] = json.loads(out)["constraints"]
    replays = {r["sensitivity"]: r for r in report["replays"]}
    alerts = [replays[s]["alerts"] for s in ("low", "medium", "high")]
    assert alerts[0] <= alerts[1] <= alerts[2] and alerts[1] >= 1  # the holiday, at least
    # Seasonal predicts from two earlier weeks and scales by a week of residuals: three weeks
    assert replays["medium"]["judged"] == 70 - 21
    weeks = 49 / 7
    assert replays["medium"]["alerts_per_week"] == pytest.approx(alerts[1] / weeks, abs=1e-3)
    medium = replays["medium"]["recall"]
    assert set(medium) == set(FAULTS)
    assert medium["volume drop 50%"] == 1.0 and medium["missing partition"] == 1.0
    assert medium["spike"] == 1.0
    assert all(0.0 <= value <= 1.0 for r in replays.values() for value in r["recall"].values())
    assert replays["high"]["recall"]["null burst"] >= replays["low"]["recall"]["null burst"]

    args = ["history", "annotate", "flights_daily_volume", "--expected", HOLIDAY.isoformat()]
    assert main([*args, "--reason", "Thanksgiving"]) == EXIT_OK
    code, out = backtest(capsys, "--json")
    [again] = json.loads(out)["constraints"]
    medium_again = {r["sensitivity"]: r for r in again["replays"]}["medium"]
    assert medium_again["alerts"] == alerts[1] - 1  # the holiday is expected now
    assert "recall" not in medium_again


def test_backtest_refuses_a_check_without_anomaly_constraints(spark, demo_history, capsys):
    assert main(["backtest", "nope"]) == EXIT_USAGE
    assert (
        main(["backtest", "yesterdays_flights_have_times", "--at", "2013-12-11T07:00:00"])
        == EXIT_USAGE
    )
    assert "has no anomaly constraint" in capsys.readouterr().err
