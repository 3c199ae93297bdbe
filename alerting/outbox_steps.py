"""Each external step of a claimed outbox row recorded as begun before its call and as done
after it, on the caller's connection: a delivery run writes a confirmed step in the transaction
that begins the next one (alerting.delivery), so at most one step per deliverer is ever begun and
unconfirmed, in one commit per step instead of two."""

from __future__ import annotations

import datetime as dt
import json

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from alerting.outbox import Claimed, stored_thread
from alerting.receivers.base import Thread
from alerting.tables import notifications, receiver_threads

n = notifications
# built once: a delivery run writes one of each per notification
_ROW = n.update().where(n.c.id == sa.bindparam("b_id"))
_START = _ROW.where(n.c.lease_holder == sa.bindparam("b_holder"), n.c.status == "pending").values(
    step_started=sa.bindparam("step_started"),
    step_started_at=sa.bindparam("step_started_at"),
    lease_until=sa.bindparam("lease_until"),
    attempts=n.c.attempts + 1,
)
_STEP_DONE = _ROW.values(
    steps_done=sa.bindparam("steps_done"),
    last_error=sa.bindparam("last_error"),
    step_started=None,
    step_started_at=None,
)
_SENT = _STEP_DONE.values(
    status="sent", sent_at=sa.bindparam("sent_at"), lease_holder=None, lease_until=None
)
_UPDATE_THREAD = receiver_threads.update().where(
    receiver_threads.c.incident_id == sa.bindparam("b_incident"),
    receiver_threads.c.receiver == sa.bindparam("b_receiver"),
)


def start_step(
    connection: Connection,
    claimed: Claimed,
    step: int,
    *,
    holder: str,
    now: dt.datetime,
    lease: dt.timedelta,
    lease_now: dt.datetime | None = None,
) -> Thread | None:
    """Record `step` as begun (and renew the lease, from `lease_now`: the database's clock)
    before its call, and return the row's thread memory as stored; None when the lease was lost
    to another deliverer, who now owns the row."""
    begun = connection.execute(
        _START,
        {
            "b_id": claimed.id,
            "b_holder": holder,
            "step_started": step,
            "step_started_at": now,
            "lease_until": (now if lease_now is None else lease_now) + lease,
        },
    ).rowcount
    return stored_thread(connection, claimed) if begun else None


def finish_step(
    connection: Connection,
    claimed: Claimed,
    *,
    steps_done: int,
    thread: Thread,
    sent: bool,
    now: dt.datetime,
    error: str | None = None,
) -> None:
    """Record a confirmed step with the receiver's thread memory; the last step marks the row
    sent and ends the lease."""
    values: dict[str, object] = {
        "b_id": claimed.id,
        "steps_done": steps_done,
        "last_error": error,
    }
    if sent:
        connection.execute(_SENT, {**values, "sent_at": now})
    else:
        connection.execute(_STEP_DONE, values)
    if thread != claimed.thread:
        connection.execute(
            _UPDATE_THREAD,
            {
                "b_incident": claimed.notification.incident_id,
                "b_receiver": claimed.notification.receiver,
                "thread": json.dumps(thread, sort_keys=True),
            },
        )


def fail(connection: Connection, claimed: Claimed, error: str) -> None:
    """A permanent failure: the row is `failed` with its reason, for good."""
    connection.execute(
        n.update()
        .where(n.c.id == claimed.id)
        .values(
            status="failed",
            last_error=error,
            step_started=None,
            step_started_at=None,
            lease_holder=None,
            lease_until=None,
        )
    )


def defer(
    connection: Connection,
    claimed: Claimed,
    *,
    until: dt.datetime | None,
    error: str | None,
    in_doubt: bool,
) -> None:
    """Leave the row pending for a later run (not before `until`) and give up the lease. A step
    in doubt stays marked as begun, so the next attempt looks before repeating it."""
    values: dict[str, object] = {
        "next_attempt_at": until,
        "last_error": error,
        "lease_holder": None,
        "lease_until": None,
    }
    if not in_doubt:
        values.update(step_started=None, step_started_at=None)
    connection.execute(n.update().where(n.c.id == claimed.id).values(**values))


def defer_receiver(connection: Connection, receiver: str, until: dt.datetime) -> None:
    """Every pending row of a rate-limited or unreachable receiver waits until `until`."""
    connection.execute(
        n.update()
        .where(
            n.c.receiver == receiver,
            n.c.status == "pending",
            sa.or_(n.c.next_attempt_at.is_(None), n.c.next_attempt_at < until),
        )
        .values(next_attempt_at=until)
    )


def release(connection: Connection, claimed: list[Claimed], holder: str) -> None:
    """Give up the leases of rows claimed and never begun (a run out of budget, or deferred):
    another deliverer may take them at once instead of after the lease."""
    if claimed:
        connection.execute(
            n.update()
            .where(
                n.c.id.in_([c.id for c in claimed]),
                n.c.lease_holder == holder,
                n.c.status == "pending",
            )
            .values(lease_holder=None, lease_until=None)
        )
