"""Digests: when a receiver's backlog is more than its rate limit lets it send in one delivery
run (Slack: about one message per second per channel), its least urgent first notices are folded
into one notification, the most urgent of them, which lists the others ("Also opened in this
run (37)"): one message instead of a queue that would take hours. A CRITICAL is never folded,
and nothing is dropped: a folded row is written `grouped` with the digest's incident as its
thread, as a group's member is (alerting.groups), so its later notices go to the digest's thread."""

from __future__ import annotations

import datetime as dt
from dataclasses import replace

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

from alerting.grouping import with_member
from alerting.model import Notification, NotifyReason
from alerting.render import headline
from alerting.tables import notifications
from checkers.levels import AlertLevel

n = notifications


def capacity(messages_per_second: float | None, budget_s: float) -> int | None:
    """Notifications a receiver can send in one run at its rate limit; None: no limit."""
    if messages_per_second is None:
        return None
    return max(1, int(messages_per_second * budget_s))


def fold_backlog(engine: Engine, receiver: str, limit: int, lease_now: dt.datetime) -> int:
    """Fold `receiver`'s pending first notices below CRITICAL into one digest so that its
    backlog is at most `limit` rows (or as near as the CRITICALs and rows already under way
    allow). Returns how many rows were folded into the digest (0: none, also when a concurrent
    deliverer folded or took one of them first: its transaction is then rolled back whole)."""
    try:
        return _fold(engine, receiver, limit, lease_now)
    except _Raced:
        return 0


class _Raced(Exception):
    """Another deliverer changed a row this digest was folding."""


def _fold(engine: Engine, receiver: str, limit: int, lease_now: dt.datetime) -> int:
    with engine.begin() as connection:
        backlog = connection.execute(
            sa.select(sa.func.count()).where(n.c.receiver == receiver, n.c.status == "pending")
        ).scalar_one()
        if backlog <= limit:
            return 0
        rows = _foldable(connection, receiver, lease_now)
        folded = rows[max(0, len(rows) - (backlog - limit + 1)) :]  # the least urgent
        if len(folded) < 2:
            return 0
        _write_digest(connection, folded[0], folded[1:], lease_now)
        return len(folded) - 1


def _foldable(connection: Connection, receiver: str, lease_now: dt.datetime) -> list[sa.Row]:
    """The receiver's pending first notices below CRITICAL that no deliverer has begun, most
    urgent first (the order delivery takes them in, alerting.outbox)."""
    return list(
        connection.execute(
            sa.select(n.c.id, n.c.incident_id, n.c.payload)
            .where(
                n.c.receiver == receiver,
                n.c.status == "pending",
                n.c.reason == NotifyReason.NEW.value,
                n.c.sequence == 1,
                n.c.level < int(AlertLevel.CRITICAL),
                n.c.steps_done == 0,
                n.c.step_started.is_(None),
                n.c.thread_incident_id.is_(None),
                _unleased(lease_now),
            )
            .order_by(n.c.level.desc(), n.c.incident_id, n.c.sequence)
        )
    )


def _unleased(lease_now: dt.datetime) -> sa.ColumnElement[bool]:
    return sa.or_(n.c.lease_until.is_(None), n.c.lease_until <= lease_now)


def _write_digest(
    connection: Connection, root: sa.Row, members: list[sa.Row], lease_now: dt.datetime
) -> None:
    digest = Notification.from_json(root.payload)
    for row in members:
        member = Notification.from_json(row.payload)
        digest = with_member(digest, member, headline(member))
        # a group's root folded: its own members stay listed
        digest = replace(digest, members=(*digest.members, *member.members))
    still_pending = sa.and_(n.c.status == "pending", _unleased(lease_now))
    changed = connection.execute(
        n.update()
        .where(n.c.id == root.id, still_pending)
        .values(payload=digest.to_json(), level=int(digest.level))
    ).rowcount
    ids = [row.id for row in members]
    changed += connection.execute(
        n.update()
        .where(n.c.id.in_(ids), still_pending)
        .values(status="grouped", thread_incident_id=root.incident_id)
    ).rowcount
    if changed != len(ids) + 1:  # compare-and-swap: all of them, or none
        raise _Raced()


__all__ = ["capacity", "fold_backlog"]
