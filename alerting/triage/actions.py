"""The triage actions on an incident: acknowledge, snooze, mark expected. Each runs in one
transaction: the incident's new state, its event, and what the receivers are told (outbox rows)
commit together. Each is idempotent: a request key seen before, or an action already applied
(a second click, by anyone), changes nothing and returns `changed=False`; such repeats are not
recorded in the event log, which holds what changed the incident."""

from __future__ import annotations

import datetime as dt
import glob
from collections.abc import Callable
from dataclasses import replace

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

from alerting.model import Incident, IncidentStatus
from alerting.mutes import Silence
from alerting.recording import record_in_transaction
from alerting.silences import add_silence
from alerting.store import incident_from_row
from alerting.tables import incidents
from alerting.triage.effects import (
    enqueue_acknowledgement,
    enqueue_resolution,
    enqueue_snooze_line,
)
from alerting.triage.events import record_event, seen_request
from alerting.triage.expected import add_known_broken_keys, annotate_run_metrics
from alerting.triage.values import ActionResult, Actor, UnknownIncident
from alerting.triage.views import snoozed_until
from checkers.levels import AlertLevel

#: A snooze ending at most this much before the one asked for counts as the same (a double click).
SNOOZE_SLACK = dt.timedelta(minutes=1)

#: (changed, message) of an action applied to a loaded incident in the action's transaction.
Apply = Callable[[Connection, Incident], tuple[bool, str]]


def acknowledge(
    engine: Engine,
    incident_id: int,
    actor: Actor,
    *,
    now: dt.datetime,
    request_key: str | None = None,
) -> ActionResult:
    """Record who acknowledged the incident and when; escalation over time stops at the level
    acknowledged (a rise by the data still notifies, repeats stop); the receivers told of it
    hear "Acknowledged by @name" (Slack: thread reply and root edit; PagerDuty: acknowledge)."""

    def apply(connection: Connection, incident: Incident) -> tuple[bool, str]:
        if not incident.open:
            return False, f"Incident {incident_id} is already resolved"
        if incident.acknowledged_by:
            return False, f"Already acknowledged by @{incident.acknowledged_by}"
        level = _decided_level(connection, incident)
        won = connection.execute(
            incidents.update()
            .where(
                incidents.c.id == incident_id,
                incidents.c.status == "open",
                incidents.c.acknowledged_at.is_(None),
            )
            .values(
                acknowledged_at=now,
                acknowledged_by_id=actor.id,
                acknowledged_by_name=actor.name,
                acknowledged_level=int(level),
            )
        ).rowcount
        if not won:
            return False, f"Incident {incident_id} was acknowledged meanwhile"
        message = f"Acknowledged by {actor.handle}"
        acknowledged = replace(incident, acknowledged_by=actor.name, acknowledged_level=level)
        enqueue_acknowledgement(connection, acknowledged, level, now, message)
        return True, message

    return _act(engine, incident_id, actor, "acknowledge", now, request_key, apply)


def snooze(
    engine: Engine,
    incident_id: int,
    actor: Actor,
    *,
    duration: dt.timedelta,
    now: dt.datetime,
    request_key: str | None = None,
) -> ActionResult:
    """Silence this incident's fingerprint for `duration`, created by the actor: notifications
    are held back meanwhile and reconciled when it ends, exactly as `dq silence` silences. The
    receivers told of the incident hear who snoozed it until when (Slack: a thread line)."""
    if duration <= dt.timedelta(0):
        raise ValueError("a snooze needs a positive duration")

    def apply(connection: Connection, incident: Incident) -> tuple[bool, str]:
        if not incident.open:
            return False, f"Incident {incident_id} is already resolved"
        until = now + duration
        running = snoozed_until(connection, incident.fingerprint, now)
        if running is not None and running >= until - SNOOZE_SLACK:
            return False, f"Already snoozed until {_minute(running)}"
        silence = Silence(
            check_pattern=glob.escape(incident.check),  # the check itself, no pattern
            starts_at=now,
            ends_at=until,
            comment=f"incident {incident_id} snoozed from {actor.source}",
            created_by=actor.name,
            fingerprint=incident.fingerprint,
        )
        add_silence(connection, silence)
        span = f"{duration_text(duration)} by {actor.handle} (until {_minute(until)})"
        message = f"Snoozed for {span}"
        level = _decided_level(connection, incident)
        enqueue_snooze_line(connection, incident, level, now, message)
        return True, message

    return _act(engine, incident_id, actor, "snooze", now, request_key, apply)


def mark_expected(
    engine: Engine,
    incident_id: int,
    actor: Actor,
    *,
    now: dt.datetime,
    reason: str | None = None,
    known_broken_for: dt.timedelta | None = None,
    request_key: str | None = None,
) -> ActionResult:
    """Resolve the incident as expected (who, why); the receivers told of it hear the
    resolution. The run's metric points get an "expected" annotation, so anomaly detection
    trains on them and accepts their values. With `known_broken_for`, the failing keys become
    known broken for the check until then (excused at judge time)."""
    if known_broken_for is not None and known_broken_for <= dt.timedelta(0):
        raise ValueError("known_broken_for must be a positive duration")
    note = (reason or "").strip()

    def apply(connection: Connection, incident: Incident) -> tuple[bool, str]:
        if not incident.open:
            done = _resolved_as(connection, incident_id)
            return False, f"Incident {incident_id} is already resolved" + (
                f" as {done}" if done else ""
            )
        keys = incident.last_outcome.failing_keys
        if known_broken_for is not None and not keys:
            raise ValueError(
                f"incident {incident_id} has no failing keys to mark known broken "
                "(only a row check with key columns lists them)"
            )
        won = connection.execute(
            incidents.update()
            .where(incidents.c.id == incident_id, incidents.c.status == "open")
            .values(
                status=IncidentStatus.RESOLVED.value,
                resolved_at=now,
                updated_at=now,
                open_fingerprint=None,
                resolved_as="expected",
                resolution_note=note or None,
            )
        ).rowcount
        if not won:
            return False, f"Incident {incident_id} was resolved meanwhile"
        message = f"Marked expected by {actor.handle}" + (f": {note}" if note else "")
        details = [message]
        points = annotate_run_metrics(connection, incident, actor, note, now)
        if points:
            details.append(f"{points} metric point(s) of its run annotated as expected")
        if known_broken_for is not None:
            until = now + known_broken_for
            added = add_known_broken_keys(connection, incident, keys, until, actor, now)
            details.append(f"{added} failing key(s) known broken until {_minute(until)}")
        resolved = replace(
            incident, status=IncidentStatus.RESOLVED, resolved_at=now, updated_at=now
        )
        enqueue_resolution(connection, resolved, now, message)
        return True, "; ".join(details)

    return _act(engine, incident_id, actor, "expected", now, request_key, apply)


def _act(
    engine: Engine,
    incident_id: int,
    actor: Actor,
    action: str,
    now: dt.datetime,
    request_key: str | None,
    apply: Apply,
) -> ActionResult:
    """Run `apply` on the incident in one transaction and record its event when it changed
    something. A concurrent writer of the same outbox sequence or request key makes the
    transaction fail whole; it runs once more, and then sees what the other did."""

    def attempt(connection: Connection) -> ActionResult:
        seen = seen_request(connection, request_key)
        if seen is not None:
            return ActionResult(incident_id, action, False, f"Already done: {seen.detail}")
        incident = load_incident(connection, incident_id)
        changed, message = apply(connection, incident)
        if changed:
            record_event(
                connection, incident_id, actor, action, message, now=now, request_key=request_key
            )
        return ActionResult(incident_id, action, changed, message)

    return record_in_transaction(engine, attempt)


def load_incident(connection: Connection, incident_id: int) -> Incident:
    """The incident with this id; UnknownIncident when there is none."""
    row = connection.execute(sa.select(incidents).where(incidents.c.id == incident_id))
    found = row.mappings().first()
    if found is None:
        raise UnknownIncident(incident_id)
    return incident_from_row(found)


def duration_text(duration: dt.timedelta) -> str:
    """`1h`, `4h`, `24h`, `7d`, `90m`: how long, in the largest whole unit."""
    seconds = int(duration.total_seconds())
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds % size == 0 and (unit != "d" or seconds >= 7 * 86400):
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


def _decided_level(connection: Connection, incident: Incident) -> AlertLevel:
    """The level alerting last decided for the incident: what its notifications said."""
    effective = connection.execute(
        sa.select(incidents.c.effective_level).where(incidents.c.id == incident.id)
    ).scalar()
    return incident.level if effective is None else max(AlertLevel(effective), incident.level)


def _resolved_as(connection: Connection, incident_id: int) -> str | None:
    return connection.execute(
        sa.select(incidents.c.resolved_as).where(incidents.c.id == incident_id)
    ).scalar()


def _minute(moment: dt.datetime) -> str:
    return moment.strftime("%Y-%m-%d %H:%M UTC")


__all__ = ["acknowledge", "duration_text", "load_incident", "mark_expected", "snooze"]
