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
    queue: list[int] | None = None,
    limit: int = CLAIM_BATCH,
) -> list[Claimed]:
    """Lease up to `limit` deliverable rows of `receiver` in one transaction (the most urgent
    level first; each thread in order), or none. Candidates are read without locks; a chunk of
    them is then locked by primary key with SKIP LOCKED on PostgreSQL and MariaDB (MariaDB at
    READ COMMITTED: a wide locking scan would hide every candidate from a concurrent deliverer)
    and leased by a conditional UPDATE (all SQLite has: it has no row locks, and serialises
    writers). Leases are times of `lease_now`'s clock (the database's:
    `checkers.project_db.database_clock`; default `now`). A leased row is not begun: a
    deliverer that dies holding it delays it by the lease, and repeats nothing.
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
            return []
        while queue:
            take = min(limit, max(1, len(queue) // SHARE))  # leave a concurrent deliverer some
            chunk = [int(row_id) for row_id in queue[:take]]
            del queue[:take]
            claimed = _claim(engine, chunk, holder=holder, now=(now, lease_now), lease=lease)
            if claimed:
                return claimed
    return []


def _claim(
    engine: Engine,
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
            rows = {
                row["id"]: row
                for row in connection.execute(
                    sa.select(n).where(n.c.id.in_(locked), n.c.lease_holder == holder)
                ).mappings()
            }
            threads = _threads(connection, list(rows.values()))
    return [_claimed(rows[i], threads) for i in row_ids if i in rows]  # in urgency order


def _claimed(row: sa.RowMapping, threads: dict[int, str]) -> Claimed:
    text = threads.get(row["incident_id"])
    if not text and row["thread_incident_id"] is not None:  # a group member: the group's thread
        text = threads.get(row["thread_incident_id"])
    return Claimed(
        id=int(row["id"]),
        notification=Notification.from_json(str(row["payload"])),
        steps_done=int(row["steps_done"]),
        step_started=row["step_started"],
        thread=json.loads(text) if text else {},
    )


def _threads(connection: Connection, rows: list[sa.RowMapping]) -> dict[int, str]:
    """Each row's receiver thread memory (its own incident's and its group's), by incident id."""
    if not rows:
        return {}
    wanted = {r["incident_id"] for r in rows} | {
        r["thread_incident_id"] for r in rows if r["thread_incident_id"] is not None
    }
    t = receiver_threads.c
    found = connection.execute(
        sa.select(t.incident_id, t.thread).where(
            t.receiver == rows[0]["receiver"], t.incident_id.in_(wanted), t.thread.is_not(None)
        )
    )
    return {int(incident_id): str(text) for incident_id, text in found}


def stored_thread(connection: Connection, claimed: Claimed) -> Thread:
    """`claimed`'s thread memory as stored now (a row claimed in a batch may have waited while
    another of its group's notifications changed it)."""
    row = connection.execute(sa.select(n).where(n.c.id == claimed.id)).mappings().one()
    return _claimed(row, _threads(connection, [row])).thread


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
