"""Acceptance 4: "this is expected" on an anomaly check's incident. The flagged run's metric point
is annotated; the next run with the same value passes (anomaly detection trains on the point and
accepts its value), the incident is resolved as expected, and `dq history` shows the annotation
on that run. Real Spark, the metric history in the project database (SQLite and PostgreSQL)."""

from __future__ import annotations

import datetime as dt

import pytest

from alerting import EscalationPolicy
from alerting.receivers import FileReceiver
from alerting.triage import Actor, incident_views, mark_expected
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
from scheduling.cli import main
from scheduling.runner import run_checks
from scheduling.schema import project_database
from scheduling.settings import Settings
from tests.scheduling.databases import fresh_database

DAY = dt.timedelta(days=1)
START = dt.datetime(2026, 11, 1, 6, 0, tzinfo=dt.UTC)
TAGS = {"series": "orders_daily"}
HISTORY = [100.0, 102.0, 98.0, 101.0, 99.0]  # five ordinary days before the checked ones
ROWS = {"today": 300}  # the next run's number of rows (set by the test)
KINDS = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]


class OrdersVolume(QualityCheck, register=False):
    name = "orders_volume"
    description = "The number of orders a day is in line with recent days."
    alert_level = FixedLevel(AlertLevel.ERROR)
    parser = CallableParser(lambda spark: spark.range(ROWS["today"]).toDF("id"), name="orders")

    def checker(self, orders):  # type: ignore[no-untyped-def]
        volume = Check(CheckLevel.ERROR, "daily volume").has_no_anomalies(
            Size(), BatchNormal(), tags=TAGS
        )
        key = ResultKey(self.now, TAGS)
        history = MetricHistory(MetricsRepository(database_url()), key, "orders")
        return MetricChecker(orders, [volume], history=history)


@pytest.fixture(params=KINDS)
def settings(request, tmp_path, monkeypatch):
    with fresh_database(request.param, tmp_path) as url:
        monkeypatch.setenv("DQ_DATABASE_URL", url)
        monkeypatch.setenv("DQ_CONFIG", str(tmp_path / "absent.toml"))
        monkeypatch.setenv("DQ_STATE_DIR", str(tmp_path / "state"))
        engine = project_database(url)
        repository = MetricsRepository(engine)
        for day, size in enumerate(HISTORY):
            key = ResultKey(START + day * DAY, TAGS)
            repository.save(key, [Metric(Size(), value=size)], source_table="orders")
        policy = EscalationPolicy(routes={"file": AlertLevel.WARNING})
        yield Settings(engine, {"file": FileReceiver("file", tmp_path / "alerts.jsonl")}, policy)
        engine.dispose()


def run(settings, spark, at):
    [outcome] = run_checks([OrdersVolume], now=at, settings=settings, spark=spark).outcomes
    return outcome


def test_expected_anomaly_passes_next_time_and_history_shows_it(settings, spark, capsys):
    flagged_at = START + len(HISTORY) * DAY
    flagged = run(settings, spark, flagged_at)
    assert flagged.status is Status.FAILED and "is anomalous" in str(flagged.sample)
    with settings.engine.connect() as connection:
        [incident] = incident_views(connection, now=flagged_at)

    ana = Actor("U1", "ana", "slack")
    result = mark_expected(
        settings.engine,
        incident.id,
        ana,
        now=flagged_at + dt.timedelta(hours=1),
        reason="the Black Friday campaign",
    )
    assert result.changed and "1 metric point(s) of its run annotated as expected" in result.message
    repository = MetricsRepository(settings.engine)
    later = flagged_at + DAY
    assert repository.series(Size(), source_table="orders", before=later, tags=TAGS)[-1] == (
        flagged_at,
        300.0,
        False,  # the flagged point, normal now: it trains the strategy
    )
    points = repository.annotated_series(Size(), source_table="orders", before=later, tags=TAGS)
    assert [point.value for point in points if point.expected] == [300.0]

    again = run(settings, spark, later)  # the same value the next day
    assert again.status is Status.PASSED, again.sample
    with settings.engine.connect() as connection:
        [view] = incident_views(connection, open_only=False, now=later)
    assert (view.status, view.resolved_as) == ("resolved", "expected")

    capsys.readouterr()
    assert main(["history", "orders_volume"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 3  # the passing run, the flagged run, its annotation beneath it
    assert "annotated expected by @ana: the Black Friday campaign (1 metric point)" in lines[2]
    assert "FAILED" in lines[1] or "failed" in lines[1].lower()
