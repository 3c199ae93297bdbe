"""A note in an incident's threads: one line for a human (an acknowledgement, the checks an
inhibition holds back) to every receiver already told of the incident, through the outbox, so it
is delivered crash-safe and retried like any notification."""

from __future__ import annotations

import datetime as dt
import json

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from alerting.model import Incident, NotifyReason
from alerting.stages import Decision, ReceiverThread, enqueue
from alerting.store import NotificationStore
from alerting.tables import notifications
from checkers.levels import AlertLevel


def enqueue_note(
    connection: Connection,
    incident: Incident,
    level: AlertLevel,
    now: dt.datetime,
    note: str,
    reason: NotifyReason,
) -> list[str]:
    """Enqueue `note` (as `reason`) for each receiver told of the incident; returns their names.
    A receiver whose latest notice a mute holds back is skipped: it hears the incident's state
    when the mute ends (alerting.reconcile)."""
    assert incident.id is not None
    outbox = NotificationStore(connection)
    decisions = [
        Decision(name, thread, reason)
        for name, thread in sorted(outbox.threads(incident.id).items())
        if thread.last is not None and not _held_back(connection, incident.id, thread)
    ]
    links = latest_links(connection, incident.id)
    enqueued = enqueue(
        decisions, incident, level, now, outcome=incident.last_outcome, links=links, note=note
    )
    for decision in enqueued:
        outbox.enqueue(decision)
    return [d.receiver for d in enqueued]


def latest_links(connection: Connection, incident_id: int) -> dict[str, str]:
    """The links the incident's latest notification carried (failing rows, runbook, page)."""
    payload = connection.execute(
        sa.select(notifications.c.payload)
        .where(notifications.c.incident_id == incident_id)
        .order_by(notifications.c.id.desc())
        .limit(1)
    ).scalar()
    links: dict[str, str] = json.loads(payload).get("links") or {} if payload else {}
    return links


def _held_back(connection: Connection, incident_id: int, thread: ReceiverThread) -> bool:
    status = connection.execute(
        sa.select(notifications.c.status).where(
            notifications.c.incident_id == incident_id,
            notifications.c.receiver == thread.receiver,
            notifications.c.sequence == thread.sequence,
        )
    ).scalar()
    return status == "suppressed"
