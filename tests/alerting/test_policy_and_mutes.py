"""Escalation over runs and time, silences and maintenance windows, through the pipeline and a
real database: muted incidents are recorded and notify once the mute ends."""

from __future__ import annotations

import datetime as dt
import uuid

import pytest
import sqlalchemy as sa

from alerting import (
    Alert,
    EscalationPolicy,
    MaintenanceWindow,
    NotifyReason,
    Silence,
    add_silence,
    handle_outcome,
    update_incident,
)
from alerting.tables import incidents, notifications
from checkers import AlertLevel
from scheduling.schema import project_database
from tests.alerting.conftest import T0, outcome
from tests.conftest import POSTGRES_URL

W, E, C = AlertLevel.WARNING, AlertLevel.ERROR, AlertLevel.CRITICAL
QUARTER = dt.timedelta(minutes=15)


def test_escalation_after_runs_and_after_time():
    incident, _ = update_incident(None, Alert.from_outcome(outcome(W)), T0)
    by_runs = EscalationPolicy(escalate_after_runs=2)
    by_time = EscalationPolicy(escalate_after=dt.timedelta(hours=1))
    levels = []
    for _ in range(1, 7):
        levels.append(by_runs.effective_level(incident, T0))
        incident, _ = update_incident(incident, Alert.from_outcome(outcome(W)), T0)
    assert levels == [W, W, E, E, C, C]
    assert by_time.effective_level(incident, T0 + dt.timedelta(minutes=59)) is W
    assert by_time.effective_level(incident, T0 + dt.timedelta(hours=1)) is E
    assert by_time.effective_level(incident, T0 + dt.timedelta(hours=5)) is C


def test_policy_validation():
    with pytest.raises(ValueError):
        EscalationPolicy(routes={"slack": AlertLevel.OK})
    with pytest.raises(ValueError):
        EscalationPolicy(escalate_after_runs=0)


def reasons(engine, receiver: str) -> list[tuple[str, str]]:
    with engine.connect() as connection:
        rows = connection.execute(
            sa.select(notifications.c.reason, notifications.c.status)
            .where(notifications.c.receiver == receiver)
            .order_by(notifications.c.id)
        )
        return [tuple(r) for r in rows]


@pytest.mark.parametrize("kind", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def test_escalation_reaches_pagerduty_after_three_runs(tmp_path, kind):
    url = f"sqlite:///{tmp_path / 'dq.db'}" if kind == "sqlite" else POSTGRES_URL
    engine = project_database(url)
    check = f"escalating_{uuid.uuid4().hex[:12]}"  # the PostgreSQL database outlives the test
    policy = EscalationPolicy(
        routes={"slack": W, "pagerduty": E}, escalate_after_runs=2, repeat_every=None
    )
    for run in range(4):
        handle_outcome(engine, outcome(W, check=check), policy, T0 + run * QUARTER)
    with engine.connect() as connection:
        pending = connection.execute(
            sa.select(notifications.c.receiver, notifications.c.reason, notifications.c.level)
            .join(incidents, incidents.c.id == notifications.c.incident_id)
            .where(incidents.c.check_name == check)
            .order_by(notifications.c.id)
        ).all()
    assert [tuple(p) for p in pending] == [
        ("slack", "new", W),
        ("slack", "level_raised", E),
        ("pagerduty", "new", E),
    ]


def test_silence_records_and_resumes(engine):
    with engine.begin() as connection:
        add_silence(connection, Silence("orders_*", T0, T0 + 2 * QUARTER, "backfill", "ana"))
    policy = EscalationPolicy(routes={"slack": W}, repeat_every=None)
    first = handle_outcome(engine, outcome(W), policy, T0)
    assert first.incident is not None and first.suppressed == {
        "slack": f"silenced until {(T0 + 2 * QUARTER).isoformat()}: backfill"
    }
    handle_outcome(engine, outcome(W), policy, T0 + QUARTER)  # still muted: nothing new
    after = handle_outcome(engine, outcome(W), policy, T0 + 2 * QUARTER)
    assert [n.reason for n in after.enqueued] == [NotifyReason.NEW]
    assert reasons(engine, "slack") == [
        ("new", "suppressed"),
        ("new", "suppressed"),
        ("new", "pending"),
    ]
    with engine.connect() as connection:
        assert connection.execute(sa.select(incidents.c.failing_runs)).scalar() == 3


def test_maintenance_window_every_sunday_night_paris():
    window = MaintenanceWindow(
        "flights_*",
        weekdays=(6,),
        start=dt.time(23, 0),
        duration=dt.timedelta(hours=3),
        tz="Europe/Paris",
    )
    sunday_late = dt.datetime(2026, 11, 22, 22, 30, tzinfo=dt.UTC)  # 23:30 in Paris
    monday_early = dt.datetime(2026, 11, 23, 0, 30, tzinfo=dt.UTC)  # 01:30 in Paris
    monday_late = dt.datetime(2026, 11, 23, 1, 0, tzinfo=dt.UTC)  # 02:00: over
    assert window.mutes("flights_fresh", sunday_late)
    assert window.mutes("flights_fresh", monday_early)
    assert window.mutes("flights_fresh", monday_late) is None
    assert window.mutes("orders", sunday_late) is None


def test_mutes_given_by_the_caller_apply_too(engine):
    policy = EscalationPolicy(routes={"slack": W})
    window = MaintenanceWindow(
        "*", weekdays=tuple(range(7)), start=dt.time(5, 0), duration=dt.timedelta(hours=2)
    )
    recorded = handle_outcome(engine, outcome(W), policy, T0, mutes=[window])
    assert recorded.enqueued == [] and "maintenance" in recorded.suppressed["slack"]
