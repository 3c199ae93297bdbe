"""Outbox rows claimed with a lease, so two deliverers never send the same notification, and each
external step recorded as begun and as done. A row is claimable when it is pending, due, not
leased (or its lease expired: its deliverer died) and the first pending row of its thread."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterable
from dataclasses import dataclass, field, replace

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


#: Rows read per look for claimable ones; a row is the first pending one of its thread for good
#: (sequences only grow, rows never return to pending), so a candidate stays valid until taken.
CANDIDATES = 100
#: Rows leased per claiming transaction: one commit per this many notifications, not one each;
#: at most 1/SHARE of the candidates seen, so a small backlog is shared with another deliverer
#: (one stuck in a slow call holds back only the rows it leased).
CLAIM_BATCH = 25
SHARE = 4


def claim_many(
    engine: Engine,
    receiver: str,
    *,
    holder: str,
    now: dt.datetime,
    lease: dt.timedelta,
    lease_now: dt.datetime | None = None,
    queue: Candidates | None = None,
    limit: int = CLAIM_BATCH,
    at_least: int = 1,
) -> list[Claimed]:
    """Lease up to `limit` deliverable rows of `receiver` in one transaction (the most urgent
    level first; each thread in order), or none. Candidates are read without locks; a chunk of
    them is then locked by primary key with SKIP LOCKED on PostgreSQL and MariaDB (MariaDB at
    READ COMMITTED: a wide locking scan would hide every candidate from a concurrent deliverer)
    and leased by a conditional UPDATE (all SQLite has: it has no row locks, and serialises
    writers). Leases are times of `lease_now`'s clock (the database's:
    `checkers.project_db.database_clock`; default `now`). A leased row is not begun: a
    deliverer that dies holding it delays it by the lease, and repeats nothing.
    `at_least`: rows to lease even from a small backlog (a receiver sending that many at once).
    `queue`: the candidates the caller's last look left (a delivery run keeps one per receiver:
    one look per CANDIDATES rows, not per row, which on a large backlog is most of the cost)."""
    lease_now = now if lease_now is None else lease_now
    queue = Candidates() if queue is None else queue
    for _ in range(10):  # candidates all taken by others meanwhile: look again
        if not queue.ids:
            with engine.connect() as connection:
                queue.ids.extend(
                    connection.execute(
                        sa.select(n.c.id)
                        .where(n.c.receiver == receiver, _free(now, lease_now), _first_of_thread())
                        .order_by(_urgency().desc(), n.c.incident_id, n.c.sequence)
                        .limit(CANDIDATES)
                    ).scalars()
                )
            queue.seen = len(queue.ids)
        if not queue.ids:
            return []
        while queue.ids:
            take = min(limit, max(at_least, queue.seen // SHARE))  # leave another deliverer some
            chunk = [int(row_id) for row_id in queue.ids[:take]]
            del queue.ids[:take]
            claimed = _claim(
                engine, receiver, chunk, holder=holder, now=(now, lease_now), lease=lease
            )
            if claimed:
                return claimed
    return []


@dataclass
class Candidates:
    """Rows a look found claimable, not yet tried, and how many it found."""

    ids: list[int] = field(default_factory=list)
    seen: int = 0


def _claim(
    engine: Engine,
    receiver: str,
    row_ids: list[int],
    *,
    holder: str,
    now: tuple[dt.datetime, dt.datetime],
    lease: dt.timedelta,
) -> list[Claimed]:
    with engine.connect() as connection:
        if connection.dialect.name in ("mysql", "mariadb"):
            connection = connection.execution_options(isolation_level="READ COMMITTED")
        with connection.begin():
            locked = set(
                connection.execute(
                    sa.select(n.c.id)
                    .where(n.c.id.in_(row_ids), _free(*now))
                    .with_for_update(skip_locked=True)
                ).scalars()
            )
            if not locked:
                return []
            connection.execute(
                n.update()
                .where(n.c.id.in_(locked), _free(*now))
                .values(lease_holder=holder, lease_until=now[1] + lease)
            )
            found = connection.execute(
                sa.select(n).where(n.c.id.in_(locked), n.c.lease_holder == holder)
            ).mappings()
            rows = {row["id"]: _claimed(row, {}) for row in found}
            threads = _threads(connection, receiver, (c.notification for c in rows.values()))
    return [  # in urgency order
        replace(rows[i], thread=_thread_of(rows[i].notification, threads))
        for i in row_ids
        if i in rows
    ]


def _claimed(row: sa.RowMapping, threads: dict[int, str]) -> Claimed:
    notification = Notification.from_json(str(row["payload"]))
    return Claimed(
        id=int(row["id"]),
        notification=notification,
        steps_done=int(row["steps_done"]),
        step_started=row["step_started"],
        thread=_thread_of(notification, threads),
    )


def _thread_of(notification: Notification, threads: dict[int, str]) -> Thread:
    text = threads.get(notification.incident_id)
    if not text and notification.thread_incident_id is not None:  # a member: the group's thread
        text = threads.get(notification.thread_incident_id)
    return json.loads(text) if text else {}


def _threads(
    connection: Connection, receiver: str, notices: Iterable[Notification]
) -> dict[int, str]:
    """The receiver's thread memory of these notifications' incidents and groups, by incident."""
    wanted = set()
    for notice in notices:
        wanted |= {notice.incident_id, notice.thread_incident_id} - {None}
    if not wanted:
        return {}
    t = receiver_threads.c
    found = connection.execute(
        sa.select(t.incident_id, t.thread).where(
            t.receiver == receiver, t.incident_id.in_(wanted), t.thread.is_not(None)
        )
    )
    return {int(incident_id): str(text) for incident_id, text in found}


def stored_thread(connection: Connection, claimed: Claimed) -> Thread:
    """`claimed`'s thread memory as stored now. Only a group member's can have changed since it
    was claimed (its group's thread, told of by another of the batch or another deliverer):
    a row's own thread has no other pending row before it."""
    notice = claimed.notification
    if notice.thread_incident_id is None:
        return claimed.thread
    return _thread_of(notice, _threads(connection, notice.receiver, [notice]))


#: A pending backlog this large may have come in one burst, since PostgreSQL's autovacuum last
#: sampled the outbox: planned on the sample before it (a few rows), each look for claimable
#: rows becomes a nested loop over the whole backlog (5.5 s a look at 5,000, 35 ms after).
FRESH_STATISTICS_AT = 1000


def fresh_statistics(engine: Engine) -> bool:
    """On PostgreSQL, sample the outbox again (ANALYZE) before delivering a large backlog; True
    when it did. A database user that does not own the table gets a warning and the old plan."""
    if engine.dialect.name != "postgresql":
        return False
    with engine.connect() as connection:
        backlog = connection.execute(
            sa.select(sa.func.count()).where(n.c.status == "pending")
        ).scalar_one()
        if backlog < FRESH_STATISTICS_AT:
            return False
        connection.exec_driver_sql(f"ANALYZE {n.name}")
        connection.commit()
    return True


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
