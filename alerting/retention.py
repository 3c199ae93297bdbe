"""Pruning alerting's history (`dq prune`): runs and resolved incidents (with their
notifications, receiver threads and event log) older than a cutoff. Open incidents, their runs
and every pending notification are kept whatever their age."""

from __future__ import annotations

import datetime as dt

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from alerting.tables import incident_events, incidents, notifications, receiver_threads, runs


def prune_runs(connection: Connection, before: dt.datetime) -> int:
    """Delete runs that ended before `before`, except those of checks with an open incident
    (its page shows them). Returns how many."""
    open_checks = sa.select(incidents.c.check_name).where(incidents.c.status == "open")
    ended = sa.func.coalesce(runs.c.finished_at, runs.c.started_at, runs.c.window_end)
    return int(
        connection.execute(
            runs.delete().where(ended < before, runs.c.check_name.not_in(open_checks))
        ).rowcount
    )


def prune_incidents(connection: Connection, before: dt.datetime) -> int:
    """Delete incidents resolved before `before` that have nothing left to send, with their
    notifications, receiver threads and event log. Returns how many incidents."""
    pending = sa.select(notifications.c.incident_id).where(notifications.c.status == "pending")
    old = list(
        connection.execute(
            sa.select(incidents.c.id).where(
                incidents.c.status == "resolved",
                incidents.c.resolved_at < before,
                incidents.c.id.not_in(pending),
            )
        ).scalars()
    )
    for start in range(0, len(old), 500):  # bounded IN lists
        ids = old[start : start + 500]
        for table in (notifications, receiver_threads, incident_events):
            connection.execute(table.delete().where(table.c.incident_id.in_(ids)))
        connection.execute(incidents.delete().where(incidents.c.id.in_(ids)))
    return len(old)
