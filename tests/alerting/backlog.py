"""A bad day's outbox written in bulk: `count` open incidents, CRITICAL, ERROR and WARNING in
turn, each with a pending first notice per receiver its level is routed to, as recording leaves
them (incident, outbox row, receiver thread), in three statements instead of `count` runs."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping

import sqlalchemy as sa

from alerting.installation import installation_id
from alerting.model import (
    Alert,
    IncidentStatus,
    Notification,
    NotifyReason,
    fingerprint,
)
from alerting.tables import incidents, notifications, receiver_threads
from checkers import AlertLevel
from tests.alerting.conftest import outcome

LEVELS = (AlertLevel.CRITICAL, AlertLevel.ERROR, AlertLevel.WARNING)


def seed_open_incidents(
    engine: sa.Engine, count: int, routes: Mapping[str, AlertLevel], at: dt.datetime
) -> dict[AlertLevel, int]:
    """Write the backlog; returns how many incidents opened at each level."""
    alerts = [
        Alert.from_outcome(outcome(LEVELS[i % 3], check=f"bad_day_{i:05d}", sample=()))
        for i in range(count)
    ]
    with engine.begin() as connection:
        connection.execute(
            incidents.insert(),
            [
                {
                    "fingerprint": a.fingerprint,
                    "check_name": a.check,
                    "scope": a.scope,
                    "status": IncidentStatus.OPEN.value,
                    "level": int(a.level),
                    "peak_level": int(a.level),
                    "effective_level": int(a.level),
                    "failing_runs": 1,
                    "opened_at": at,
                    "updated_at": at,
                    "last_outcome": a.outcome.to_json(),
                    "open_fingerprint": a.fingerprint,
                }
                for a in alerts
            ],
        )
        ids = dict(connection.execute(sa.select(incidents.c.fingerprint, incidents.c.id)).all())
        first = {  # every incident's first notice, as the decision stage makes it
            "sequence": 1,
            "reason": NotifyReason.NEW,
            "incident_status": IncidentStatus.OPEN,
            "failing_runs": 1,
            "opened_at": at,
            "created_at": at,
            "installation": installation_id(connection),
        }
        told = [
            Notification(
                ids[fingerprint(a.check, a.scope)],
                a.fingerprint,
                receiver,
                level=a.level,
                outcome=a.outcome,
                **first,
            )
            for a in alerts
            for receiver, lowest in routes.items()
            if a.level >= lowest
        ]
        connection.execute(notifications.insert(), [_outbox_row(n) for n in told])
        connection.execute(
            receiver_threads.insert(),
            [
                {
                    "incident_id": n.incident_id,
                    "receiver": n.receiver,
                    "sequence": 1,
                    "last_level": int(n.level),
                    "last_reason": n.reason.value,
                    "last_notified_at": at,
                }
                for n in told
            ],
        )
    return {level: sum(a.level is level for a in alerts) for level in LEVELS}


def _outbox_row(n: Notification) -> dict[str, object]:
    return {
        "incident_id": n.incident_id,
        "receiver": n.receiver,
        "sequence": n.sequence,
        "reason": n.reason.value,
        "level": int(n.level),
        "dedup_key": n.dedup_key,
        "payload": n.to_json(),
        "status": "pending",
        "attempts": 0,
        "steps_done": 0,
        "created_at": n.created_at,
    }
