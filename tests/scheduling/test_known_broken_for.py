"""Marking a row check's incident expected with `known_broken_for`: its failing keys are excused
by the runs until then (the outcome is TOLERATED, no incident opens), and fail again once they
expire.
Real Spark and the tick, the keys in the project database (SQLite and PostgreSQL)."""

from __future__ import annotations

import datetime as dt

import pytest

from alerting import EscalationPolicy
from alerting.receivers import FileReceiver
from alerting.triage import Actor, incident_views, mark_expected
from checkers import AlertLevel, Status
from scheduling.runner import run_checks
from scheduling.schema import project_database
from scheduling.settings import Settings
from tests.scheduling.databases import fresh_database
from tests.scheduling.test_escalated_level import LateOrders

T0 = dt.datetime(2026, 11, 22, 7, 0, tzinfo=dt.UTC)
HOUR = dt.timedelta(hours=1)
KINDS = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]


@pytest.fixture(params=KINDS)
def settings(request, tmp_path):
    with fresh_database(request.param, tmp_path) as url:
        engine = project_database(url)
        policy = EscalationPolicy(routes={"file": AlertLevel.WARNING})
        yield Settings(engine, {"file": FileReceiver("file", tmp_path / "alerts.jsonl")}, policy)
        engine.dispose()


def run(settings, spark, at):
    [outcome] = run_checks([LateOrders], now=at, settings=settings, spark=spark).outcomes
    return outcome


def open_incidents(settings, at):
    with settings.engine.connect() as connection:
        return incident_views(connection, now=at)


def test_failing_keys_are_excused_until_they_expire(settings, spark):
    first = run(settings, spark, T0)
    assert first.status is Status.FAILED and sorted(first.failing_keys) == [2, 3]
    [incident] = open_incidents(settings, T0)

    result = mark_expected(
        settings.engine,
        incident.id,
        Actor("ops", "ops", "cli"),
        now=T0 + HOUR,
        reason="two late shipments, refunded",
        known_broken_for=24 * HOUR,
    )
    assert "2 failing key(s) known broken until 2026-11-23 08:00 UTC" in result.message

    excused = run(settings, spark, T0 + 2 * HOUR)
    assert excused.status is Status.TOLERATED, excused
    assert (excused.failing, excused.excused, excused.unexcused) == (2, 2, 0)
    assert "known broken keys 2, 3" in excused.tolerance
    assert open_incidents(settings, T0 + 2 * HOUR) == []

    expired = run(settings, spark, T0 + 26 * HOUR)  # the keys expired: failing again
    assert expired.status is Status.FAILED and expired.excused == 0
    [reopened] = open_incidents(settings, T0 + 26 * HOUR)
    assert reopened.id != incident.id
