"""Grouping in the recording's transaction (the pure part is alerting.grouping). The first
incident of a group (the lowest id of one key opened at one moment) notifies as usual; each later
one is folded into the group's root while that root is still pending and untouched (a
compare-and-swap on the outbox row: a deliverer that claimed it first wins, and the member then
replies in the group's thread), written `grouped` (told, not sent on its own). Its later
notifications reply in the group's thread."""

from __future__ import annotations

from dataclasses import replace

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from alerting.grouping import with_member
from alerting.model import Incident, Notification, NotifyReason
from alerting.render import headline
from alerting.stages import Decision
from alerting.tables import incidents, notifications


def join_group(
    connection: Connection, incident: Incident, decisions: tuple[Decision, ...], key: str
) -> tuple[tuple[Decision, ...], set[str]]:
    """Put the newly opened `incident` in the group `key` of its opening moment. Returns its
    decisions (their notifications aimed at the group's thread when it has a first incident
    other than this one) and the receivers whose share the group's root took (to be written
    `grouped`)."""
    assert incident.id is not None
    connection.execute(
        incidents.update().where(incidents.c.id == incident.id).values(group_key=key)
    )
    first = connection.execute(
        sa.select(incidents.c.id, incidents.c.fingerprint)
        .where(incidents.c.group_key == key, incidents.c.opened_at == incident.opened_at)
        .order_by(incidents.c.id)
        .limit(1)
    ).first()
    if first is None or first.id == incident.id:
        return decisions, set()
    told = _told_receivers(connection, first.id)
    aimed, folded = [], set()
    for decision in decisions:
        n = decision.notification
        if n is None or decision.receiver not in told:
            aimed.append(decision)
            continue
        n = replace(n, thread_incident_id=first.id, thread_fingerprint=first.fingerprint)
        if n.reason is NotifyReason.NEW and not decision.muted and _fold(connection, first.id, n):
            folded.add(decision.receiver)
        aimed.append(replace(decision, notification=n))
    return tuple(aimed), folded


def _told_receivers(connection: Connection, incident_id: int) -> set[str]:
    """Receivers the group's first incident has a thread with (not muted)."""
    rows = connection.execute(
        sa.select(notifications.c.receiver).where(
            notifications.c.incident_id == incident_id,
            notifications.c.sequence == 1,
            notifications.c.status.in_(("pending", "sent")),
        )
    )
    return {str(r) for r in rows.scalars()}


def _fold(connection: Connection, first_id: int, member: Notification) -> bool:
    """List `member` on the group's root for its receiver while that root is pending and no
    deliverer has begun it; False when it is too late (the member then replies in the thread)."""
    untouched = sa.and_(
        notifications.c.incident_id == first_id,
        notifications.c.receiver == member.receiver,
        notifications.c.sequence == 1,
        notifications.c.status == "pending",
        notifications.c.steps_done == 0,
        notifications.c.step_started.is_(None),
        notifications.c.lease_holder.is_(None),
    )
    row = connection.execute(
        sa.select(notifications.c.id, notifications.c.payload).where(untouched)
    ).first()
    if row is None:
        return False
    root = with_member(Notification.from_json(row.payload), member, headline(member))
    won = connection.execute(
        notifications.update()
        .where(notifications.c.id == row.id, untouched, notifications.c.payload == row.payload)
        .values(payload=root.to_json(), level=int(root.level))
    ).rowcount
    return bool(won)


def still_open_in_group(connection: Connection, notification: Notification) -> int:
    """How many other incidents of the group thread `notification` goes to (its receiver's) are
    still open: the group's first incident and the members whose rows went to its thread."""
    first = notification.thread_incident_id or notification.incident_id
    members = sa.select(notifications.c.incident_id).where(
        notifications.c.thread_incident_id == first,
        notifications.c.receiver == notification.receiver,
    )
    found = connection.execute(
        sa.select(sa.func.count()).where(
            sa.or_(incidents.c.id == first, incidents.c.id.in_(members)),
            incidents.c.id != notification.incident_id,
            incidents.c.status == "open",
        )
    ).scalar()
    return int(found or 0)
