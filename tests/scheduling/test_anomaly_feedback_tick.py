"""Acceptance 3 (issue 26), through the tick with real Spark on SQLite and PostgreSQL: a volume
anomaly on a planned backfill day marked expected (`dq history annotate --expected`): the next
run with a similar value passes; without the annotation it alerts again. A maintenance window
leaves its points out of training (not only muted), and a check's own `min_change` and
`sensitivity` apply; a bad setting is refused when the check is defined."""

from __future__ import annotations

import datetime as dt

import pytest

from alerting import EscalationPolicy, MaintenanceWindow
from alerting.receivers import FileReceiver
from checkers import AlertLevel, FixedLevel, MetricChecker, Status
from checkers.metrics import (
    BatchNormal,
    Check,
    CheckLevel,
    Metric,
    MetricHistory,
    MetricsRepository,
    ResultKey,
    Size,
)
from checkers.parsers import CallableParser
from checkers.project_db import database_url
from checks import QualityCheck
from checks.definition import CheckDefinitionError
from scheduling.cli import main
from scheduling.runner import run_checks
from scheduling.schema import project_database
from scheduling.settings import Settings
from tests.scheduling.databases import fresh_database

DAY = dt.timedelta(days=1)
START = dt.datetime(2026, 11, 1, 6, 0, tzinfo=dt.UTC)
TAGS = {"series": "orders_daily"}
HISTORY = [100.0, 102.0, 98.0, 101.0, 99.0]
ROWS = {"today": 100}
KINDS = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
BACKFILL_DAY = START + len(HISTORY) * DAY  # 2026-11-06


class OrdersBackfill(QualityCheck, register=False):
    name = "orders_backfill"
    description = "The number of orders a day is in line with recent days."
    alert_level = FixedLevel(AlertLevel.ERROR)
    parser = CallableParser(lambda spark: spark.range(ROWS["today"]).toDF("id"), name="orders")

    def checker(self, orders):  # type: ignore[no-untyped-def]
        volume = Check(CheckLevel.ERROR, "daily volume").has_no_anomalies(
            Size(), BatchNormal(), tags=TAGS
        )
        history = MetricHistory(MetricsRepository(database_url()), ResultKey(self.now, TAGS), "o")
        return MetricChecker(orders, [volume], history=history)


class OrdersWithFloor(OrdersBackfill, register=False):
    name = "orders_with_floor"
    min_change = 500  # a change of fewer than 500 orders never alerts


class OrdersRelaxed(OrdersBackfill, register=False):
    name = "orders_relaxed"
    sensitivity = "low"


@pytest.fixture(params=KINDS)
def database(request, tmp_path, monkeypatch):
    with fresh_database(request.param, tmp_path) as url:
        monkeypatch.setenv("DQ_DATABASE_URL", url)
        monkeypatch.setenv("DQ_CONFIG", str(tmp_path / "absent.toml"))
        monkeypatch.setenv("DQ_STATE_DIR", str(tmp_path / "state"))
        engine = project_database(url)
        repository = MetricsRepository(engine)
        for day, size in enumerate(HISTORY):
            key = ResultKey(START + day * DAY, TAGS)
            repository.save(key, [Metric(Size(), value=size)], source_table="o")
        yield engine, tmp_path
        engine.dispose()


def settings_for(database, *mutes):  # type: ignore[no-untyped-def]
    engine, directory = database
    policy = EscalationPolicy(routes={"file": AlertLevel.WARNING})
    receivers = {"file": FileReceiver("file", directory / "alerts.jsonl")}
    return Settings(engine, receivers, policy, mutes=list(mutes))


def run(check, settings, spark, at, rows):  # type: ignore[no-untyped-def]
    ROWS["today"] = rows
    [outcome] = run_checks([check], now=at, settings=settings, spark=spark).outcomes
    return outcome


@pytest.mark.parametrize("annotated", [True, False], ids=["expected", "not-annotated"])
def test_a_planned_backfill_marked_expected_passes_the_next_run(database, spark, annotated, capsys):
    settings = settings_for(database)
    backfill = run(OrdersBackfill, settings, spark, BACKFILL_DAY, 300)
    assert backfill.status is Status.FAILED and "is anomalous" in str(backfill.sample)
    if annotated:
        args = ["history", "annotate", "orders_backfill", "--expected", "2026-11-06"]
        assert main([*args, "--reason", "planned backfill", "--by", "ana"]) == 0
        assert "orders_backfill: expected 2026-11-06T00:00:00+00:00..2026-11-07" in (
            capsys.readouterr().out
        )
        assert main(["history", "orders_backfill"]) == 0
        last = capsys.readouterr().out.splitlines()[-1]
        assert last.startswith("annotated period") and last.endswith(": planned backfill")

    after = run(OrdersBackfill, settings, spark, BACKFILL_DAY + DAY, 310)  # a similar value
    if annotated:
        assert after.status is Status.PASSED, after.sample
    else:
        assert after.status is Status.FAILED and "is anomalous" in str(after.sample)


def test_a_maintenance_window_keeps_its_points_out_of_training(database, spark):
    # Fridays 05:00-07:00 UTC: the backfill day's run (06:00) and its point fall inside
    window = MaintenanceWindow("orders_*", (BACKFILL_DAY.weekday(),), dt.time(5), 2 * DAY / 24)
    settings = settings_for(database, window)
    during = run(OrdersBackfill, settings, spark, BACKFILL_DAY, 300)
    assert during.status is Status.PASSED, during.sample  # not judged: inside the window

    after = run(OrdersBackfill, settings, spark, BACKFILL_DAY + DAY, 300)
    # the window's 300 did not train: judged against the five ordinary days only
    assert after.status is Status.FAILED
    assert "from 5 earlier runs" in str(after.sample)


def test_a_checks_min_change_and_sensitivity_apply(database, spark):
    settings = settings_for(database)
    assert run(OrdersWithFloor, settings, spark, BACKFILL_DAY, 300).status is Status.PASSED
    # 3.8 standard deviations above the mean: medium allows 3, low 4.5
    assert run(OrdersRelaxed, settings, spark, BACKFILL_DAY, 106).status is Status.PASSED
    assert run(OrdersBackfill, settings, spark, BACKFILL_DAY, 106).status is Status.FAILED


def test_annotate_refuses_what_it_cannot_store(database, capsys):
    assert main(["history", "annotate", "orders_nowhere", "--expected", "2026-11-06"]) == 2
    assert "no check named 'orders_nowhere'" in capsys.readouterr().err
    for bad in (
        ["--exclude", "2026-11-06"],
        ["--exclude", "2026-11-08..2026-11-06"],
        ["--expected", "yesterday"],
        ["--expected", "2026-11-06", "--baseline-since", "2026-11-01"],
        [],
    ):
        assert main(["history", "annotate", "orders_backfill", *bad]) == 2, bad
    assert "give exactly one of" in capsys.readouterr().err


def test_bad_anomaly_settings_are_refused_at_definition_time():
    with pytest.raises(CheckDefinitionError, match="sensitivity must be one of low, medium"):

        class Eager(OrdersBackfill, register=False):
            sensitivity = "extreme"

    with pytest.raises(CheckDefinitionError, match="min_change must be a number >= 0"):

        class Floored(OrdersBackfill, register=False):
            min_change = "a lot"
