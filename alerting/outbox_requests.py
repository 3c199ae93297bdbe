"""What people ask of the outbox (`dq outbox list|retry`): the notifications still to send or
that failed for good, and failed ones sent again on request once the cause is fixed (a revoked
token replaced). A retry is recorded in the incident's event log, and nothing already sent is
touched."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from alerting.store import required_utc
from alerting.tables import incidents, notifications
from alerting.triage.events import record_event
from alerting.triage.values import Actor
from checkers.project_db import as_utc

n = notifications

#: What `dq outbox list` shows by default: what is left to send, and what never will be.
LISTED = ("pending", "failed")


@dataclass(frozen=True)
class OutboxEntry:
    """One notification as an operator sees it."""

    id: int
    incident_id: int
    check: str
    receiver: str
    reason: str
    status: str
    attempts: int
    created_at: dt.datetime
    next_attempt_at: dt.datetime | None
    last_error: str | None

    def line(self) -> str:
        due = f" next {self.next_attempt_at:%Y-%m-%d %H:%M}" if self.next_attempt_at else ""
        error = f": {self.last_error}" if self.last_error else ""
        return (
            f"{self.id:>6}  {self.status:8} {self.receiver:12} incident {self.incident_id} "
            f"{self.check} ({self.reason}, {self.attempts} attempt(s){due}){error}"
        )


def outbox_entries(
    connection: Connection,
    *,
    statuses: Sequence[str] = LISTED,
    receiver: str | None = None,
    incident_id: int | None = None,
) -> list[OutboxEntry]:
    """Notifications in `statuses`, of one receiver or incident when given, oldest first."""
    query = (
        sa.select(n, incidents.c.check_name)
        .join(incidents, incidents.c.id == n.c.incident_id)
        .where(n.c.status.in_(list(statuses)))
        .order_by(n.c.id)
    )
    if receiver is not None:
        query = query.where(n.c.receiver == receiver)
    if incident_id is not None:
        query = query.where(n.c.incident_id == incident_id)
    return [
        OutboxEntry(
            id=int(row["id"]),
            incident_id=int(row["incident_id"]),
            check=str(row["check_name"]),
            receiver=str(row["receiver"]),
            reason=str(row["reason"]),
            status=str(row["status"]),
            attempts=int(row["attempts"] or 0),
            created_at=required_utc(row["created_at"]),
            next_attempt_at=as_utc(row["next_attempt_at"]),
            last_error=row["last_error"],
        )
        for row in connection.execute(query).mappings()
    ]


def retry_failed(
    connection: Connection,
    actor: Actor,
    now: dt.datetime,
    *,
    receiver: str | None = None,
    incident_id: int | None = None,
) -> list[OutboxEntry]:
    """Failed notifications (of `receiver`, of `incident_id`, or all) pending again, due now,
    each retry in its incident's event log; the next delivery sends them. Returns them."""
    failed = outbox_entries(
        connection, statuses=("failed",), receiver=receiver, incident_id=incident_id
    )
    for entry in failed:
        connection.execute(
            n.update()
            .where(n.c.id == entry.id, n.c.status == "failed")
            .values(status="pending", next_attempt_at=None, lease_holder=None, lease_until=None)
        )
        record_event(
            connection,
            entry.incident_id,
            actor,
            "retry",
            f"{entry.receiver}: {entry.reason} notification sent again on request "
            f"(it had failed: {entry.last_error or 'no reason recorded'})",
            now=now,
            request_key=None,
        )
    return failed
