"""From an outcome to durable notifications, in the caller's transaction: the run row, the
incident and the outbox rows are committed together, so an alert is never lost between them."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

from alerting.decisions import LastNotice, decide
from alerting.model import (
    Alert,
    Incident,
    IncidentChange,
    IncidentStatus,
    Notification,
    NotifyReason,
    update_incident,
)
from alerting.mutes import Mute, muted_because, stored_silences
from alerting.policy import EscalationPolicy
from alerting.recording import record_in_transaction
from alerting.tables import incidents, notifications, receiver_threads
from checkers.levels import AlertLevel
from checkers.outcome import CheckOutcome
from checkers.project_db import as_utc
from scheduling.tables import runs


@dataclass
class Recorded:
    """What recording one outcome did."""

    run_id: int
    incident: Incident | None
    change: IncidentChange
    enqueued: list[Notification] = field(default_factory=list)
    suppressed: dict[str, str] = field(default_factory=dict)  # receiver -> mute reason


def insert_run(
    connection: Connection,
    outcome: CheckOutcome,
    window: tuple[dt.datetime, dt.datetime] | None = None,
) -> int:
    result = connection.execute(
        runs.insert().values(
            check_name=outcome.check,
            window_start=window[0] if window else None,
            window_end=window[1] if window else None,
            status=outcome.status.value,
            level=int(outcome.level),
            failing=outcome.failing,
            total=outcome.total,
            started_at=outcome.started_at,
            finished_at=outcome.finished_at,
            error=outcome.error,
            outcome=outcome.to_json(),
        )
    )
    return int(result.inserted_primary_key[0])  # type: ignore[index]


def _load_open_incident(connection: Connection, fingerprint: str) -> Incident | None:
    row = (
        connection.execute(
            sa.select(incidents)
            .where(incidents.c.fingerprint == fingerprint, incidents.c.status == "open")
            .order_by(incidents.c.id.desc())
        )
        .mappings()
        .first()
    )
    return None if row is None else incident_from_row(row)


def incident_from_row(row: Mapping[Any, Any]) -> Incident:
    return Incident(
        id=row["id"],
        fingerprint=row["fingerprint"],
        check=row["check_name"],
        scope=row["scope"],
        status=IncidentStatus(row["status"]),
        level=AlertLevel(row["level"]),
        peak_level=AlertLevel(row["peak_level"]),
        failing_runs=row["failing_runs"],
        opened_at=as_utc(row["opened_at"]),  # type: ignore[arg-type]
        updated_at=as_utc(row["updated_at"]),  # type: ignore[arg-type]
        resolved_at=as_utc(row["resolved_at"]),
        last_outcome=CheckOutcome.from_json(row["last_outcome"]),
    )


def _save_incident(
    connection: Connection, incident: Incident, effective_level: AlertLevel | None = None
) -> Incident:
    values = {
        "fingerprint": incident.fingerprint,
        "check_name": incident.check,
        "scope": incident.scope,
        "status": incident.status.value,
        "level": int(incident.level),
        "peak_level": int(incident.peak_level),
        "failing_runs": incident.failing_runs,
        "opened_at": incident.opened_at,
        "updated_at": incident.updated_at,
        "resolved_at": incident.resolved_at,
        "last_outcome": incident.last_outcome.to_json(),
        # unique: a second open incident of this fingerprint fails (see record_in_transaction)
        "open_fingerprint": incident.fingerprint if incident.open else None,
    }
    if effective_level is not None:
        values["effective_level"] = int(effective_level)
    if incident.id is None:
        new_id = connection.execute(incidents.insert().values(**values)).inserted_primary_key[0]  # type: ignore[index]
        return Incident(**{**incident.__dict__, "id": int(new_id)})
    connection.execute(incidents.update().where(incidents.c.id == incident.id).values(**values))
    return incident


def save_effective_level(connection: Connection, incident_id: int, level: AlertLevel) -> None:
    """Remember the level alerting decided for an open incident (escalation included)."""
    connection.execute(
        incidents.update().where(incidents.c.id == incident_id).values(effective_level=int(level))
    )


def open_incident_levels(connection: Connection, checks: Sequence[str]) -> dict[str, AlertLevel]:
    """Each of `checks` with an open incident: the level alerting last decided for it
    (escalation included; the latest run's level for incidents recorded before migration 8)."""
    if not checks:
        return {}
    rows = connection.execute(
        sa.select(incidents.c.check_name, incidents.c.effective_level, incidents.c.level).where(
            incidents.c.status == "open", incidents.c.check_name.in_(sorted(set(checks)))
        )
    )
    found: dict[str, AlertLevel] = {}
    for check, effective, level in rows:
        decided = AlertLevel(effective if effective is not None else level)
        found[check] = max(found.get(check, decided), decided)  # one per scope: the highest
    return found


def _threads(connection: Connection, incident_id: int) -> dict[str, dict[str, Any]]:
    rows = connection.execute(
        sa.select(receiver_threads).where(receiver_threads.c.incident_id == incident_id)
    ).mappings()
    return {r["receiver"]: dict(r) for r in rows}


def _last_notice(state: dict[str, Any] | None) -> LastNotice | None:
    if not state or state.get("last_reason") is None:
        return None
    return LastNotice(
        AlertLevel(state["last_level"]),
        NotifyReason(state["last_reason"]),
        as_utc(state["last_notified_at"]),  # type: ignore[arg-type]
    )


def enqueue_notification(
    connection: Connection,
    incident: Incident,
    receiver: str,
    state: dict[str, Any] | None,
    reason: NotifyReason,
    level: AlertLevel,
    now: dt.datetime,
    *,
    outcome: CheckOutcome,
    links: dict[str, str] | None = None,
    muted: str | None = None,
) -> Notification:
    """Write one outbox row (`suppressed` when `muted` says why) and the receiver's thread state:
    `state` is its dq_receiver_threads row, None when it has none yet. A muted notice does not
    count as told."""
    assert incident.id is not None
    sequence = int((state or {}).get("sequence") or 0) + 1
    notification = Notification(
        incident_id=incident.id,
        fingerprint=incident.fingerprint,
        receiver=receiver,
        sequence=sequence,
        reason=reason,
        level=level,
        incident_status=incident.status,
        failing_runs=incident.failing_runs,
        opened_at=incident.opened_at,
        created_at=now,
        outcome=outcome,
        links=dict(links or {}),
    )
    connection.execute(
        notifications.insert().values(
            incident_id=incident.id,
            receiver=receiver,
            sequence=sequence,
            reason=reason.value,
            level=int(level),
            dedup_key=notification.dedup_key,
            payload=notification.to_json(),
            status="suppressed" if muted else "pending",
            attempts=0,
            steps_done=0,
            last_error=muted,
            created_at=now,
        )
    )
    told = (
        {}
        if muted
        else {"last_level": int(level), "last_reason": reason.value, "last_notified_at": now}
    )
    if state is None:
        connection.execute(
            receiver_threads.insert().values(
                incident_id=incident.id, receiver=receiver, sequence=sequence, **told
            )
        )
    else:
        connection.execute(
            receiver_threads.update()
            .where(
                receiver_threads.c.incident_id == incident.id,
                receiver_threads.c.receiver == receiver,
            )
            .values(sequence=sequence, **told)
        )
    return notification


def record_outcome(
    connection: Connection,
    outcome: CheckOutcome,
    policy: EscalationPolicy,
    now: dt.datetime,
    *,
    window: tuple[dt.datetime, dt.datetime] | None = None,
    mutes: Sequence[Mute] = (),
    links: dict[str, str] | None = None,
) -> Recorded:
    """Record `outcome` (run row, incident, outbox) in `connection`'s transaction."""
    run_id = insert_run(connection, outcome, window)
    alert = Alert.from_outcome(outcome)
    current = _load_open_incident(connection, alert.fingerprint)
    incident, change = update_incident(current, alert, now)
    recorded = Recorded(run_id, incident, change)
    if incident is None or change is IncidentChange.NONE:
        return recorded
    level = policy.effective_level(incident, now) if incident.open else incident.level
    # kept on the incident (a resolved one keeps its last), so summaries and the report show
    # the level its notifications carry
    kept = level if incident.open else None
    incident = recorded.incident = _save_incident(connection, incident, kept)
    assert incident.id is not None
    threads = _threads(connection, incident.id)
    active_mutes = [*mutes, *stored_silences(connection)]
    for receiver in dict.fromkeys([*policy.routes, *threads]):
        state = threads.get(receiver)
        last = _last_notice(state)
        lowest = policy.routes.get(receiver)
        reason = decide(
            incident,
            level,
            last,
            now,
            hears_level=lowest is not None and level >= lowest,
            repeat_every=policy.repeat_every,
        )
        if reason is None:
            continue
        muted = muted_because(incident.check, now, active_mutes)
        notification = enqueue_notification(
            connection,
            incident,
            receiver,
            state,
            reason,
            level,
            now,
            outcome=outcome,
            links=links,
            muted=muted,
        )
        if muted:
            recorded.suppressed[receiver] = muted
        else:
            recorded.enqueued.append(notification)
    return recorded


def handle_outcome(
    engine: Engine,
    outcome: CheckOutcome,
    policy: EscalationPolicy,
    now: dt.datetime,
    **options: object,
) -> Recorded:
    """`record_outcome` in a transaction of its own."""
    return record_in_transaction(
        engine,
        lambda connection: record_outcome(connection, outcome, policy, now, **options),  # type: ignore[arg-type]
    )
