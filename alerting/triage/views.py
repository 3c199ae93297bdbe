"""Incidents as people see them: level, owner, who acknowledged, until when snoozed, how they
were resolved, the runbook; for the incident pages, /api/incidents and `dq incident`."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from alerting.installation import installation_id
from alerting.model import RUNBOOK_LINK
from alerting.notes import latest_links
from alerting.receivers.pagerduty import incident_dedup_key
from alerting.store import required_utc
from alerting.tables import incidents, mutes
from alerting.triage.values import IncidentView, UnknownIncident
from checkers.levels import AlertLevel
from checkers.outcome import CheckOutcome
from checkers.project_db import as_utc, utc_now


def incident_views(
    connection: Connection, *, open_only: bool = True, now: dt.datetime | None = None
) -> list[IncidentView]:
    """Open incidents (or all), the highest level first, then the oldest."""
    query = sa.select(incidents)
    if open_only:
        query = query.where(incidents.c.status == "open")
    rows = connection.execute(query.order_by(incidents.c.id)).mappings().all()
    views = [_view(connection, row, now or utc_now()) for row in rows]
    return sorted(views, key=lambda v: (not v.open, -int(v.level), v.opened_at, v.id))


def incident_view(
    connection: Connection, incident_id: int, *, now: dt.datetime | None = None
) -> IncidentView:
    """One incident; UnknownIncident when there is none with this id."""
    row = connection.execute(sa.select(incidents).where(incidents.c.id == incident_id))
    found = row.mappings().first()
    if found is None:
        raise UnknownIncident(incident_id)
    return _view(connection, found, now or utc_now())


def snoozed_until(connection: Connection, fingerprint: str, now: dt.datetime) -> dt.datetime | None:
    """The end of the latest snooze of this fingerprint still running at `now`."""
    end = connection.execute(
        sa.select(sa.func.max(mutes.c.ends_at)).where(
            mutes.c.fingerprint == fingerprint, mutes.c.starts_at <= now, mutes.c.ends_at > now
        )
    ).scalar()
    return as_utc(end)


def _view(connection: Connection, row: Mapping[Any, Any], now: dt.datetime) -> IncidentView:
    outcome = CheckOutcome.from_json(row["last_outcome"])
    level = row["effective_level"] if row["effective_level"] is not None else row["level"]
    is_open = row["status"] == "open"
    return IncidentView(
        id=row["id"],
        check=row["check_name"],
        scope=row["scope"],
        fingerprint=row["fingerprint"],
        level=AlertLevel(level),
        status=row["status"],
        owner=outcome.owner or None,
        opened_at=required_utc(row["opened_at"]),
        updated_at=required_utc(row["updated_at"]),
        resolved_at=as_utc(row["resolved_at"]),
        failing_runs=row["failing_runs"],
        acknowledged_by=row["acknowledged_by_name"],
        acknowledged_at=as_utc(row["acknowledged_at"]),
        snoozed_until=snoozed_until(connection, row["fingerprint"], now) if is_open else None,
        resolved_as=row["resolved_as"],
        resolution_note=row["resolution_note"],
        runbook=latest_links(connection, row["id"]).get(RUNBOOK_LINK),
        dedup_key=incident_dedup_key(row["fingerprint"], installation_id(connection)),
    )
