"""The incident event log (dq_incident_events): what people did, read back as a timeline. A
request key seen before makes a retried request a no-op."""

from __future__ import annotations

import datetime as dt

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from alerting.store import required_utc
from alerting.tables import incident_events as events
from alerting.triage.values import Actor, IncidentEvent


def record_event(
    connection: Connection,
    incident_id: int,
    actor: Actor,
    action: str,
    detail: str,
    *,
    now: dt.datetime,
    request_key: str | None,
) -> None:
    connection.execute(
        events.insert().values(
            incident_id=incident_id,
            at=now,
            actor_id=actor.id,
            actor_name=actor.name,
            source=actor.source,
            action=action,
            detail=detail,
            request_key=request_key,
        )
    )


def seen_request(connection: Connection, request_key: str | None) -> IncidentEvent | None:
    """The event a request with this key already recorded, if any."""
    if request_key is None:
        return None
    row = connection.execute(sa.select(events).where(events.c.request_key == request_key))
    found = row.mappings().first()
    return None if found is None else _event(found)


def incident_events(connection: Connection, incident_id: int) -> list[IncidentEvent]:
    """The incident's timeline, oldest first."""
    rows = connection.execute(
        sa.select(events).where(events.c.incident_id == incident_id).order_by(events.c.id)
    ).mappings()
    return [_event(r) for r in rows]


def _event(row: sa.RowMapping) -> IncidentEvent:
    return IncidentEvent(
        id=row["id"],
        incident_id=row["incident_id"],
        at=required_utc(row["at"]),
        actor_id=row["actor_id"],
        actor_name=row["actor_name"],
        source=row["source"],
        action=row["action"],
        detail=row["detail"],
    )
