"""Reconcile ended mutes, every tick before delivery: an (incident, receiver) whose latest
notification was suppressed is decided again once no mute covers its check, from the incident's
current state and what the receiver was actually told. So a recovery that happened inside a
silence still resolves PagerDuty and the Slack root, and a still-open incident is notified."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable, Sequence

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

from alerting.decisions import decide
from alerting.model import Notification
from alerting.mutes import Mute, muted_because, stored_silences
from alerting.pipeline import (
    _last_notice,
    enqueue_notification,
    incident_from_row,
    save_effective_level,
)
from alerting.policy import EscalationPolicy
from alerting.tables import incidents, notifications, receiver_threads

#: Status of suppressed rows found, once their mute ended, to need no notification.
RECONCILED = "reconciled"


def reconcile_mutes(
    engine: Engine,
    policy_for: Callable[[str], EscalationPolicy],
    now: dt.datetime,
    *,
    mutes: Sequence[Mute] = (),
) -> list[Notification]:
    """Enqueue what receivers must hear now that the mutes hiding it ended; returns the new
    outbox rows. `policy_for(check_name)` gives the check's escalation policy; `mutes` are the
    configured ones (dq.toml silences, maintenance windows), dq_mutes rows are read here."""
    with engine.connect() as connection:
        pairs = connection.execute(
            sa.select(notifications.c.incident_id, notifications.c.receiver)
            .join(
                receiver_threads,
                sa.and_(
                    receiver_threads.c.incident_id == notifications.c.incident_id,
                    receiver_threads.c.receiver == notifications.c.receiver,
                    receiver_threads.c.sequence == notifications.c.sequence,
                ),
            )
            .where(notifications.c.status == "suppressed")
            .order_by(notifications.c.incident_id, notifications.c.receiver)
        ).all()
    enqueued = []
    for incident_id, receiver in pairs:
        try:
            with engine.begin() as connection:
                notification = _reconcile(connection, incident_id, receiver, policy_for, now, mutes)
        except sa.exc.IntegrityError:
            continue  # a concurrent run enqueued this very notification (same dedup key)
        if notification is not None:
            enqueued.append(notification)
    return enqueued


def _reconcile(
    connection: Connection,
    incident_id: int,
    receiver: str,
    policy_for: Callable[[str], EscalationPolicy],
    now: dt.datetime,
    mutes: Sequence[Mute],
) -> Notification | None:
    state = (
        connection.execute(
            sa.select(receiver_threads).where(
                receiver_threads.c.incident_id == incident_id,
                receiver_threads.c.receiver == receiver,
            )
        )
        .mappings()
        .one()
    )
    latest = connection.execute(
        sa.select(notifications.c.status, notifications.c.payload).where(
            notifications.c.incident_id == incident_id,
            notifications.c.receiver == receiver,
            notifications.c.sequence == state["sequence"],
        )
    ).one()
    if latest.status != "suppressed":
        return None  # another run got there first
    row = connection.execute(sa.select(incidents).where(incidents.c.id == incident_id))
    incident = incident_from_row(row.mappings().one())
    if muted_because(incident.check, now, [*mutes, *stored_silences(connection)]):
        return None
    policy = policy_for(incident.check)
    level = policy.effective_level(incident, now) if incident.open else incident.level
    if incident.open and incident.id is not None:
        save_effective_level(connection, incident.id, level)
    lowest = policy.routes.get(receiver)
    reason = decide(
        incident,
        level,
        _last_notice(dict(state)),
        now,
        hears_level=lowest is not None and level >= lowest,
        repeat_every=None,  # an unchanged incident waits for its next run's repeat
    )
    if reason is None:
        connection.execute(
            notifications.update()
            .where(
                notifications.c.incident_id == incident_id,
                notifications.c.receiver == receiver,
                notifications.c.status == "suppressed",
            )
            .values(status=RECONCILED)
        )
        return None
    return enqueue_notification(
        connection,
        incident,
        receiver,
        dict(state),
        reason,
        level,
        now,
        outcome=incident.last_outcome,
        links=json.loads(latest.payload).get("links") or {},
    )
