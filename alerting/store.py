"""SQL around the decision path: incidents, outbox rows and receiver threads as recording writes
them, stored silences. The tables are defined in alerting.tables.

Small classes, one per table group, each bound to the caller's Connection: everything a recording
writes visibly goes through the one transaction it was handed (run, incident, outbox and claim
commit together), and the stages (alerting.stages) see values only. What delivery writes commits
step by step outside any recording, so it stays beside its logic: leases and steps on outbox rows
in alerting.outbox, receiver backoff in alerting.backoff."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection, CursorResult

from alerting.decisions import LastNotice
from alerting.groups import still_open_in_group
from alerting.installation import installation_id
from alerting.model import Incident, IncidentStatus, Notification, NotifyReason
from alerting.mutes import Silence
from alerting.stages import Decision, ReceiverThread
from alerting.tables import incidents, mutes, notifications, receiver_threads
from checkers.levels import AlertLevel
from checkers.outcome import CheckOutcome
from checkers.project_db import as_utc

# The recording path's statements, built once with their values bound per call: building and
# keying a statement costs more than SQLite running it (a tick records thousands of outcomes).
_OPEN_INCIDENT = (
    sa.select(incidents)
    .where(incidents.c.fingerprint == sa.bindparam("b_fingerprint"), incidents.c.status == "open")
    .order_by(incidents.c.id.desc())
)
_UPDATE_INCIDENT = incidents.update().where(incidents.c.id == sa.bindparam("b_id"))
_KEEP_LEVEL = _UPDATE_INCIDENT.values(effective_level=sa.bindparam("b_level"))
_THREADS = sa.select(receiver_threads).where(
    receiver_threads.c.incident_id == sa.bindparam("b_incident")
)
_UPDATE_THREAD = receiver_threads.update().where(
    receiver_threads.c.incident_id == sa.bindparam("b_incident"),
    receiver_threads.c.receiver == sa.bindparam("b_receiver"),
)
_GROUP_THREAD = (
    sa.select(notifications.c.thread_incident_id, incidents.c.fingerprint)
    .join(incidents, incidents.c.id == notifications.c.thread_incident_id)
    .where(
        notifications.c.incident_id == sa.bindparam("b_incident"),
        notifications.c.receiver == sa.bindparam("b_receiver"),
    )
    .limit(1)
)
_SILENCES = sa.select(mutes).order_by(mutes.c.id)


class IncidentStore:
    """dq_incidents: at most one open incident per fingerprint (a unique column enforces it)."""

    def __init__(self, connection: Connection) -> None:
        self.connection = connection

    def open_incident(self, fingerprint: str) -> Incident | None:
        found = self.connection.execute(_OPEN_INCIDENT, {"b_fingerprint": fingerprint})
        row = found.mappings().first()
        return None if row is None else incident_from_row(row)

    def open_of_checks(self, checks: Sequence[str]) -> dict[str, Incident]:
        """Each of `checks` with an open incident: its earliest opened one (of any scope)."""
        if not checks:
            return {}
        rows = self.connection.execute(
            sa.select(incidents)
            .where(incidents.c.status == "open", incidents.c.check_name.in_(sorted(set(checks))))
            .order_by(incidents.c.id.desc())
        ).mappings()
        return {row["check_name"]: incident_from_row(row) for row in rows}

    def get(self, incident_id: int) -> Incident:
        row = self.connection.execute(sa.select(incidents).where(incidents.c.id == incident_id))
        return incident_from_row(row.mappings().one())

    def save(self, incident: Incident) -> Incident:
        """Insert or update `incident`; returns it with its id. A second open incident of one
        fingerprint raises IntegrityError (see alerting.recording)."""
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
            "open_fingerprint": incident.fingerprint if incident.open else None,
        }
        if incident.id is None:
            new_id = inserted_id(self.connection.execute(incidents.insert(), values))
            return Incident(**{**incident.__dict__, "id": new_id})
        self.connection.execute(_UPDATE_INCIDENT, {**values, "b_id": incident.id})
        return incident

    def keep_level(self, incident: Incident, level: AlertLevel) -> None:
        """Remember the level alerting decided for an open incident (escalation included), so
        summaries and the report show what its notifications say; a resolved one keeps its last."""
        if incident.open and incident.id is not None:
            self.connection.execute(_KEEP_LEVEL, {"b_id": incident.id, "b_level": int(level)})

    def open_levels(self, checks: Sequence[str]) -> dict[str, AlertLevel]:
        """Each of `checks` with an open incident: the level alerting last decided for it (the
        latest run's level for incidents recorded before migration 8); the highest of its scopes."""
        if not checks:
            return {}
        rows = self.connection.execute(
            sa.select(incidents.c.check_name, incidents.c.effective_level, incidents.c.level).where(
                incidents.c.status == "open", incidents.c.check_name.in_(sorted(set(checks)))
            )
        )
        found: dict[str, AlertLevel] = {}
        for check, effective, level in rows:
            decided = AlertLevel(effective if effective is not None else level)
            found[check] = max(found.get(check, decided), decided)
        return found


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
        opened_at=required_utc(row["opened_at"]),
        updated_at=required_utc(row["updated_at"]),
        resolved_at=as_utc(row["resolved_at"]),
        last_outcome=CheckOutcome.from_json(row["last_outcome"]),
        acknowledged_by=row["acknowledged_by_name"],
        acknowledged_level=None
        if row["acknowledged_level"] is None
        else AlertLevel(row["acknowledged_level"]),
    )


class NotificationStore:
    """dq_notifications (the outbox) and dq_receiver_threads (per incident and receiver: the
    sequence so far and what the receiver was last told) as the decision path writes them."""

    def __init__(self, connection: Connection) -> None:
        self.connection = connection

    def threads(self, incident_id: int) -> dict[str, ReceiverThread]:
        rows = self.connection.execute(_THREADS, {"b_incident": incident_id}).mappings()
        return {r["receiver"]: thread_from_row(r) for r in rows}

    def thread(self, incident_id: int, receiver: str) -> ReceiverThread:
        row = self.connection.execute(
            sa.select(receiver_threads).where(
                receiver_threads.c.incident_id == incident_id,
                receiver_threads.c.receiver == receiver,
            )
        )
        return thread_from_row(row.mappings().one())

    def enqueue(self, decision: Decision, *, grouped: bool = False, opened: bool = False) -> None:
        """Write the decision's outbox row (`suppressed` when muted, with the reason; `grouped`
        when the group's root lists it instead) and its receiver's thread. A muted notice does
        not count as told. A receiver whose thread of the incident is its group's goes on there
        (the row names the group's first incident, alerting.groups). `opened`: the incident was
        opened in this transaction, so no earlier row of its thread needs looking up."""
        notification = decision.notification
        if notification is None:
            raise ValueError(f"nothing to enqueue for {decision.receiver}")
        if not opened:
            notification = self._in_group_thread(notification)
        if not notification.installation:  # ours: no other installation's message is adopted
            notification = replace(notification, installation=installation_id(self.connection))
        if notification.resolved:
            notification = replace(
                notification, group_open=still_open_in_group(self.connection, notification)
            )
        status = "suppressed" if decision.muted else "grouped" if grouped else "pending"
        self.connection.execute(  # values as parameters: one cached statement for every row
            notifications.insert(),
            {
                "incident_id": notification.incident_id,
                "receiver": notification.receiver,
                "sequence": notification.sequence,
                "reason": notification.reason.value,
                "level": int(notification.level),
                "dedup_key": notification.dedup_key,
                "payload": notification.to_json(),
                "status": status,
                "attempts": 0,
                "steps_done": 0,
                "last_error": decision.muted,
                "created_at": notification.created_at,
                "thread_incident_id": notification.thread_incident_id,
            },
        )
        told: dict[str, object] = {}
        if not decision.muted:
            told = {
                "last_level": int(notification.level),
                "last_reason": notification.reason.value,
                "last_notified_at": notification.created_at,
            }
        key = {"incident_id": notification.incident_id, "receiver": notification.receiver}
        if decision.thread is None:
            self.connection.execute(
                receiver_threads.insert(), {**key, "sequence": notification.sequence, **told}
            )
            return
        where = {"b_incident": key["incident_id"], "b_receiver": key["receiver"]}
        self.connection.execute(
            _UPDATE_THREAD, {"sequence": notification.sequence, **told, **where}
        )

    def _in_group_thread(self, notification: Notification) -> Notification:
        """`notification` going to its group's thread when an earlier row of its thread did."""
        if notification.thread_incident_id is not None:
            return notification
        found = self.connection.execute(
            _GROUP_THREAD,
            {"b_incident": notification.incident_id, "b_receiver": notification.receiver},
        ).first()
        if found is None:
            return notification
        return replace(notification, thread_incident_id=found[0], thread_fingerprint=found[1])

    def suppressed_threads(self) -> list[tuple[int, str, str, str]]:
        """(incident id, receiver, check, fingerprint) of every thread whose latest notification
        was suppressed."""
        rows = self.connection.execute(
            sa.select(
                notifications.c.incident_id,
                notifications.c.receiver,
                incidents.c.check_name,
                incidents.c.fingerprint,
            )
            .join(
                receiver_threads,
                sa.and_(
                    receiver_threads.c.incident_id == notifications.c.incident_id,
                    receiver_threads.c.receiver == notifications.c.receiver,
                    receiver_threads.c.sequence == notifications.c.sequence,
                ),
            )
            .join(incidents, incidents.c.id == notifications.c.incident_id)
            .where(notifications.c.status == "suppressed")
            .order_by(notifications.c.incident_id, notifications.c.receiver)
        )
        return [(int(i), str(receiver), str(check), str(f)) for i, receiver, check, f in rows]

    def links_if_suppressed(
        self, incident_id: int, thread: ReceiverThread
    ) -> dict[str, str] | None:
        """The links of the thread's latest notification while it is still suppressed; None once
        it is not (another run reconciled it first)."""
        latest = self.connection.execute(
            sa.select(notifications.c.status, notifications.c.payload).where(
                notifications.c.incident_id == incident_id,
                notifications.c.receiver == thread.receiver,
                notifications.c.sequence == thread.sequence,
            )
        ).one()
        if latest.status != "suppressed":
            return None
        links: dict[str, str] = json.loads(latest.payload).get("links") or {}
        return links

    def held_back_because(self, incident_id: int, thread: ReceiverThread) -> str | None:
        """Why the thread's latest notification was suppressed (the mute or inhibition)."""
        reason = self.connection.execute(
            sa.select(notifications.c.last_error).where(
                notifications.c.incident_id == incident_id,
                notifications.c.receiver == thread.receiver,
                notifications.c.sequence == thread.sequence,
            )
        ).scalar()
        return None if reason is None else str(reason)

    def settle_suppressed(self, incident_id: int, receiver: str, status: str) -> None:
        """Give the receiver's suppressed rows of the incident `status`: nothing is left to tell."""
        self.connection.execute(
            notifications.update()
            .where(
                notifications.c.incident_id == incident_id,
                notifications.c.receiver == receiver,
                notifications.c.status == "suppressed",
            )
            .values(status=status)
        )


def thread_from_row(row: Mapping[Any, Any]) -> ReceiverThread:
    last = None
    if row["last_reason"] is not None:
        last = LastNotice(
            AlertLevel(row["last_level"]),
            NotifyReason(row["last_reason"]),
            required_utc(row["last_notified_at"]),
        )
    return ReceiverThread(row["receiver"], int(row["sequence"] or 0), last)


class MuteStore:
    """dq_mutes: silences added with `dq silence` (configured ones live in dq.toml)."""

    def __init__(self, connection: Connection) -> None:
        self.connection = connection

    def silences(self) -> list[Silence]:
        rows = self.connection.execute(_SILENCES).mappings()
        return [
            Silence(
                r["check_pattern"],
                required_utc(r["starts_at"]),
                required_utc(r["ends_at"]),
                r["comment"],
                r["created_by"],
                r["id"],
                r["fingerprint"],
            )
            for r in rows
        ]

    def add(self, silence: Silence) -> int:
        """Store `silence`; returns its id."""
        return inserted_id(
            self.connection.execute(
                mutes.insert().values(
                    check_pattern=silence.check_pattern,
                    starts_at=silence.starts_at,
                    ends_at=silence.ends_at,
                    comment=silence.comment,
                    created_by=silence.created_by,
                    fingerprint=silence.fingerprint,
                )
            )
        )

    def move(self, silence_id: int, starts_at: dt.datetime, ends_at: dt.datetime) -> None:
        self.connection.execute(
            sa.update(mutes)
            .where(mutes.c.id == silence_id)
            .values(starts_at=starts_at, ends_at=ends_at)
        )


def required_utc(value: dt.datetime) -> dt.datetime:
    """A NOT NULL datetime column read back, in UTC (SQLite drops the zone)."""
    utc = as_utc(value)
    if utc is None:
        raise ValueError("a required datetime column is NULL")
    return utc


def inserted_id(result: CursorResult[Any]) -> int:
    """The primary key of the row an INSERT wrote."""
    key = result.inserted_primary_key
    if key is None:
        raise ValueError("the INSERT returned no primary key")
    return int(key[0])


__all__ = [
    "IncidentStore",
    "MuteStore",
    "NotificationStore",
    "incident_from_row",
    "thread_from_row",
]
