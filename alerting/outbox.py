"""Outbox rows claimed with a lease, so two deliverers never send the same notification, and each
external step recorded as begun and as done. A row is claimable when it is pending, due, not
leased (or its lease expired: its deliverer died) and the first pending row of its thread."""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

from alerting.model import Notification
from alerting.receivers.base import Thread
from alerting.tables import notifications, receiver_threads

n = notifications


@dataclass(frozen=True)
class Claimed:
    """An outbox row this deliverer holds the lease of."""

    id: int
    notification: Notification
    steps_done: int
    step_started: int | None  # a step begun and never confirmed (its deliverer died)
    thread: Thread

    @property
    def dedup_key(self) -> str:
        return self.notification.dedup_key


def _free(now: dt.datetime, lease_now: dt.datetime) -> sa.ColumnElement[bool]:
    """Pending, due at the run's `now`, and not leased at `lease_now`: the database's clock,
    which every deliverer shares whatever its own clock or `--at` (a backfill beside the live
    scheduler must not take over a row the other is sending)."""
    return sa.and_(
        n.c.status == "pending",
        sa.or_(n.c.next_attempt_at.is_(None), n.c.next_attempt_at <= now),
        sa.or_(n.c.lease_until.is_(None), n.c.lease_until <= lease_now),
    )


def _urgency() -> sa.ColumnElement[int]:
    """A backlog is told by urgency: CRITICAL first, then ERROR, WARNING; recoveries last."""
    return sa.case((n.c.reason == "resolved", -1), else_=n.c.level)


def _first_of_thread() -> sa.ColumnElement[bool]:
    # order holds: a later notification of a thread waits until the earlier ones are done
    earlier, root = notifications.alias("earlier"), notifications.alias("group_root")
    return sa.and_(
        ~sa.exists().where(
            earlier.c.incident_id == n.c.incident_id,
            earlier.c.receiver == n.c.receiver,
            earlier.c.status == "pending",
            earlier.c.sequence < n.c.sequence,
        ),
        # a group member's reply waits for the group's root (alerting.groups)
        ~sa.exists().where(
            root.c.incident_id == n.c.thread_incident_id,
            root.c.receiver == n.c.receiver,
            root.c.status == "pending",
            root.c.sequence == 1,
        ),
    )


def claim_next(
    engine: Engine,
    receiver: str,
    *,
    holder: str,
    now: dt.datetime,
    lease: dt.timedelta,
    lease_now: dt.datetime | None = None,
    queue: list[int] | None = None,
) -> Claimed | None:
    """Lease the next deliverable row of `receiver` (the most urgent level first; each thread in
    order), or None. Candidates are
    read without locks; each is then locked by its primary key with SKIP LOCKED on PostgreSQL
    and MariaDB (MariaDB at READ COMMITTED: a wide locking scan would hide every candidate from
    a concurrent deliverer), and leased by a conditional UPDATE whose row count says who won
    (all SQLite has: it has no row locks, and serialises writers). Leases are times of
    `lease_now`'s clock (the database's: `checkers.project_db.database_clock`; default `now`).
    `queue`: the candidates the caller's last look left (a delivery run keeps one per receiver:
    one look per CANDIDATES rows, not per row, which on a large backlog is most of the cost)."""
    lease_now = now if lease_now is None else lease_now
    queue = [] if queue is None else queue
    for _ in range(10):  # candidates all taken by others meanwhile: look again
        if not queue:
            with engine.connect() as connection:
                queue.extend(
                    connection.execute(
                        sa.select(n.c.id)
                        .where(n.c.receiver == receiver, _free(now, lease_now), _first_of_thread())
                        .order_by(_urgency().desc(), n.c.incident_id, n.c.sequence)
                        .limit(CANDIDATES)
                    ).scalars()
                )
        if not queue:
            return None
        while queue:
            row_id = int(queue.pop(0))
            claimed = _claim(engine, row_id, holder=holder, now=(now, lease_now), lease=lease)
            if claimed is not None:
                return claimed
    return None


#: Rows read per look for claimable ones; a row is the first pending one of its thread for good
#: (sequences only grow, rows never return to pending), so a candidate stays valid until taken.
CANDIDATES = 100


def _claim(
    engine: Engine,
    row_id: int,
    *,
    holder: str,
    now: tuple[dt.datetime, dt.datetime],
    lease: dt.timedelta,
) -> Claimed | None:
    with engine.connect() as connection:
        if connection.dialect.name in ("mysql", "mariadb"):
            connection = connection.execution_options(isolation_level="READ COMMITTED")
        with connection.begin():
            locked = connection.execute(
                sa.select(n.c.id)
                .where(n.c.id == row_id, _free(*now))
                .with_for_update(skip_locked=True)
            ).scalar()
            if locked is None:
                return None
            won = connection.execute(
                n.update()
                .where(n.c.id == row_id, _free(*now))
                .values(lease_holder=holder, lease_until=now[1] + lease)
            ).rowcount
            return _load(connection, row_id) if won else None


def _load(connection: Connection, row_id: int) -> Claimed:
    row = connection.execute(sa.select(n).where(n.c.id == row_id)).mappings().one()
    text = _thread(connection, row["incident_id"], row["receiver"])
    if not text and row["thread_incident_id"] is not None:  # a group member: the group's thread
        text = _thread(connection, row["thread_incident_id"], row["receiver"])
    return Claimed(
        id=row_id,
        notification=Notification.from_json(str(row["payload"])),
        steps_done=int(row["steps_done"]),
        step_started=row["step_started"],
        thread=json.loads(text) if text else {},
    )


def _thread(connection: Connection, incident_id: int, receiver: str) -> str | None:
    text = connection.execute(
        sa.select(receiver_threads.c.thread).where(
            receiver_threads.c.incident_id == incident_id,
            receiver_threads.c.receiver == receiver,
        )
    ).scalar()
    return None if text is None else str(text)


def start_step(
    engine: Engine,
    claimed: Claimed,
    step: int,
    *,
    holder: str,
    now: dt.datetime,
    lease: dt.timedelta,
    lease_now: dt.datetime | None = None,
) -> bool:
    """Record `step` as begun (and renew the lease, from `lease_now`: the database's clock)
    before its call; False when the lease was lost to another deliverer, who now owns the row."""
    with engine.begin() as connection:
        return bool(
            connection.execute(
                n.update()
                .where(n.c.id == claimed.id, n.c.lease_holder == holder, n.c.status == "pending")
                .values(
                    step_started=step,
                    step_started_at=now,
                    lease_until=(now if lease_now is None else lease_now) + lease,
                    attempts=n.c.attempts + 1,
                )
            ).rowcount
        )


def finish_step(
    engine: Engine,
    claimed: Claimed,
    *,
    steps_done: int,
    thread: Thread,
    sent: bool,
    now: dt.datetime,
    error: str | None = None,
) -> None:
    """Record a confirmed step with the receiver's thread memory, in one transaction; the last
    step marks the row sent and ends the lease."""
    values: dict[str, object] = {
        "steps_done": steps_done,
        "step_started": None,
        "step_started_at": None,
        "last_error": error,
    }
    if sent:
        values.update(status="sent", sent_at=now, lease_holder=None, lease_until=None)
    with engine.begin() as connection:
        connection.execute(n.update().where(n.c.id == claimed.id).values(**values))
        if thread != claimed.thread:
            connection.execute(
                receiver_threads.update()
                .where(
                    receiver_threads.c.incident_id == claimed.notification.incident_id,
                    receiver_threads.c.receiver == claimed.notification.receiver,
                )
                .values(thread=json.dumps(thread, sort_keys=True))
            )


def fail(engine: Engine, claimed: Claimed, error: str) -> None:
    """A permanent failure: the row is `failed` with its reason, for good."""
    with engine.begin() as connection:
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
    engine: Engine,
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
    with engine.begin() as connection:
        connection.execute(n.update().where(n.c.id == claimed.id).values(**values))


def defer_receiver(engine: Engine, receiver: str, until: dt.datetime) -> None:
    """Every pending row of a rate-limited or unreachable receiver waits until `until`."""
    with engine.begin() as connection:
        connection.execute(
            n.update()
            .where(
                n.c.receiver == receiver,
                n.c.status == "pending",
                sa.or_(n.c.next_attempt_at.is_(None), n.c.next_attempt_at < until),
            )
            .values(next_attempt_at=until)
        )


def pending_receivers(engine: Engine) -> list[str]:
    with engine.connect() as connection:
        return sorted(
            connection.execute(
                sa.select(n.c.receiver).where(n.c.status == "pending").distinct()
            ).scalars()
        )


def pending_keys(engine: Engine) -> list[str]:
    with engine.connect() as connection:
        return list(
            connection.execute(
                sa.select(n.c.dedup_key).where(n.c.status == "pending").order_by(n.c.id)
            ).scalars()
        )
