"""Alerting's tables in the project database: run history, incidents, the notification outbox,
each receiver's thread of an incident, mutes, receiver backoff and the incidents' triage events;
with their migration steps."""

from __future__ import annotations

import uuid

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from checkers.project_db import Migration, UtcDateTime, utc_now
from checkers.project_db.ddl import add_missing_columns, create_missing_index, widen_for_mysql

metadata = sa.MetaData()

#: Run history: each recorded outcome, written in one transaction with its incident and outbox
#: rows (alerting.pipeline.record_outcome); claims point at it.
runs = sa.Table(
    "dq_runs",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("check_name", sa.String(200), nullable=False),
    sa.Column("window_start", UtcDateTime),
    sa.Column("window_end", UtcDateTime),
    sa.Column("status", sa.String(20), nullable=False),
    sa.Column("level", sa.Integer, nullable=False),
    sa.Column("failing", sa.BigInteger, nullable=False),
    sa.Column("total", sa.BigInteger, nullable=False),
    sa.Column("started_at", UtcDateTime),
    sa.Column("finished_at", UtcDateTime),
    sa.Column("error", sa.Text),
    sa.Column("outcome", sa.Text, nullable=False),  # CheckOutcome as JSON
    sa.Index("ix_dq_runs_check_window", "check_name", "window_end"),
)


incidents = sa.Table(
    "dq_incidents",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("fingerprint", sa.String(64), nullable=False),
    sa.Column("check_name", sa.String(200), nullable=False),
    sa.Column("scope", sa.String(200), nullable=False),
    sa.Column("status", sa.String(20), nullable=False),  # open | resolved
    sa.Column("level", sa.Integer, nullable=False),  # level of the latest failing run
    sa.Column("peak_level", sa.Integer, nullable=False),
    sa.Column("failing_runs", sa.Integer, nullable=False),
    sa.Column("opened_at", UtcDateTime, nullable=False),
    sa.Column("updated_at", UtcDateTime, nullable=False),
    sa.Column("resolved_at", UtcDateTime),
    sa.Column("last_outcome", sa.Text, nullable=False),
    sa.Index("ix_dq_incidents_fingerprint_status", "fingerprint", "status"),
    # = fingerprint while open, NULL once resolved: the unique index allows one open incident
    # per fingerprint (NULLs may repeat on SQLite, PostgreSQL and MariaDB alike). Migration 3.
    sa.Column("open_fingerprint", sa.String(64)),
    sa.Index("ux_dq_incidents_open_fingerprint", "open_fingerprint", unique=True),
    # The level alerting last decided (escalation included) while the incident was open: what
    # its notifications said. NULL for incidents recorded before migration 8.
    sa.Column("effective_level", sa.Integer),
    # Triage (migration 10): who acknowledged the incident and the level they acknowledged
    # (escalation over time stops there); how it was resolved by hand ("expected") and why.
    sa.Column("acknowledged_at", UtcDateTime),
    sa.Column("acknowledged_by_id", sa.String(200)),
    sa.Column("acknowledged_by_name", sa.String(200)),
    sa.Column("acknowledged_level", sa.Integer),
    sa.Column("resolved_as", sa.String(20)),
    sa.Column("resolution_note", sa.Text),
    # Grouping (migration 11): the group an incident opened in (alerting.grouping); the group's
    # first incident is the one with the lowest id among those of one key opened at one moment.
    sa.Column("group_key", sa.String(400)),
    sa.Index("ix_dq_incidents_group", "group_key", "opened_at"),
)

TRIAGE_COLUMNS = (
    "acknowledged_at",
    "acknowledged_by_id",
    "acknowledged_by_name",
    "acknowledged_level",
    "resolved_as",
    "resolution_note",
)

#: What people did to an incident (acknowledge, snooze, expected), from Slack, the CLI or the
#: API: its timeline. `request_key` (Slack's action_ts and user) makes a retried request a no-op.
incident_events = sa.Table(
    "dq_incident_events",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("incident_id", sa.Integer, sa.ForeignKey("dq_incidents.id"), nullable=False),
    sa.Column("at", UtcDateTime, nullable=False),
    sa.Column("actor_id", sa.String(200), nullable=False),
    sa.Column("actor_name", sa.String(200), nullable=False),
    sa.Column("source", sa.String(20), nullable=False),  # slack | cli | api
    sa.Column("action", sa.String(40), nullable=False),
    sa.Column("detail", sa.Text, nullable=False),  # one line for a human
    sa.Column("request_key", sa.String(200)),
    sa.Index("ix_dq_incident_events_incident", "incident_id", "id"),
    sa.Index("ux_dq_incident_events_request", "request_key", unique=True),
)

notifications = sa.Table(
    "dq_notifications",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("incident_id", sa.Integer, sa.ForeignKey("dq_incidents.id"), nullable=False),
    sa.Column("receiver", sa.String(200), nullable=False),
    sa.Column("sequence", sa.Integer, nullable=False),
    sa.Column("reason", sa.String(40), nullable=False),
    sa.Column("level", sa.Integer, nullable=False),
    sa.Column("dedup_key", sa.String(300), nullable=False, unique=True),
    sa.Column("payload", sa.Text, nullable=False),  # the Notification as JSON
    sa.Column("status", sa.String(20), nullable=False),  # pending|sent|suppressed|grouped|failed
    sa.Column("attempts", sa.Integer, nullable=False, default=0),
    sa.Column("steps_done", sa.Integer, nullable=False, default=0),
    sa.Column("next_attempt_at", UtcDateTime),
    sa.Column("last_error", sa.Text),
    sa.Column("created_at", UtcDateTime, nullable=False),
    sa.Column("sent_at", UtcDateTime),
    # migration 4: a deliverer's lease on the row, and the step begun but not yet confirmed
    sa.Column("lease_holder", sa.String(100)),
    sa.Column("lease_until", UtcDateTime),
    sa.Column("step_started", sa.Integer),
    sa.Column("step_started_at", UtcDateTime),
    sa.Index("ix_dq_notifications_status", "status", "receiver"),
    sa.Index("ix_dq_notifications_thread", "incident_id", "receiver", "sequence"),
    # migration 11: the group's first incident, whose receiver thread carries this row
    sa.Column("thread_incident_id", sa.Integer),
)

receiver_threads = sa.Table(
    "dq_receiver_threads",
    metadata,
    sa.Column("incident_id", sa.Integer, sa.ForeignKey("dq_incidents.id"), primary_key=True),
    sa.Column("receiver", sa.String(200), primary_key=True),
    sa.Column("last_level", sa.Integer),  # of the last notification decided (not muted)
    sa.Column("last_reason", sa.String(40)),
    sa.Column("last_notified_at", UtcDateTime),
    sa.Column("sequence", sa.Integer, nullable=False, default=0),
    sa.Column("thread", sa.Text),  # receiver-specific JSON: Slack channel/ts, first Message-ID
)

mutes = sa.Table(
    "dq_mutes",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("check_pattern", sa.String(200), nullable=False),
    sa.Column("starts_at", UtcDateTime, nullable=False),
    sa.Column("ends_at", UtcDateTime, nullable=False),
    sa.Column("comment", sa.Text, nullable=False),
    sa.Column("created_by", sa.String(200), nullable=False),
    # migration 10: a snooze from triage mutes one incident's fingerprint, not every match
    sa.Column("fingerprint", sa.String(64)),
)

#: Per receiver: not before when it may be called again (Retry-After or backoff), and why.
receiver_backoff = sa.Table(
    "dq_receiver_backoff",
    metadata,
    sa.Column("receiver", sa.String(200), primary_key=True),
    sa.Column("not_before", UtcDateTime),
    sa.Column("consecutive_failures", sa.Integer, nullable=False, default=0),
    sa.Column("last_error", sa.Text),
    sa.Column("updated_at", UtcDateTime, nullable=False),
)

#: Migration 12: a random id made with the database, in every dedup key, Message-ID and Slack
#: metadata, so two installations (staging and production, a rebuilt dq.db) never take each
#: other's messages for their own (alerting/installation.py).
installation = sa.Table(
    "dq_installation",
    metadata,
    sa.Column("id", sa.String(32), primary_key=True),
    sa.Column("created_at", UtcDateTime, nullable=False),
)


def _v1_initial(connection: Connection) -> None:
    metadata.create_all(
        connection, tables=[runs, incidents, notifications, receiver_threads, mutes]
    )


def _v3_one_open_incident(connection: Connection) -> None:
    add_missing_columns(connection, incidents, ["open_fingerprint"])
    # Before this, concurrent runs could open two incidents of one fingerprint: the newest stays
    # open (recording has updated only the newest since), the older ones close as superseded.
    opened = connection.execute(
        sa.select(incidents.c.id, incidents.c.fingerprint).where(incidents.c.status == "open")
    ).all()
    newest: dict[str, int] = {}
    for row_id, fingerprint in opened:
        newest[fingerprint] = max(row_id, newest.get(fingerprint, row_id))
    superseded = [i for i, fingerprint in opened if newest[fingerprint] != i]
    if superseded:
        connection.execute(
            incidents.update()
            .where(incidents.c.id.in_(superseded))
            .values(status="resolved", resolved_at=utc_now(), open_fingerprint=None)
        )
    if newest:
        connection.execute(
            incidents.update()
            .where(incidents.c.id.in_(sorted(newest.values())))
            .values(open_fingerprint=incidents.c.fingerprint)
        )
    create_missing_index(connection, incidents, "ux_dq_incidents_open_fingerprint")
    widen_for_mysql(connection, [runs, incidents, notifications, receiver_threads, mutes])


def _v4_delivery_leases(connection: Connection) -> None:
    leases = ("lease_holder", "lease_until", "step_started", "step_started_at")
    add_missing_columns(connection, notifications, leases)
    create_missing_index(connection, notifications, "ix_dq_notifications_thread")
    receiver_backoff.create(connection, checkfirst=True)


def _v8_effective_level(connection: Connection) -> None:
    add_missing_columns(connection, incidents, ["effective_level"])


def _v10_triage(connection: Connection) -> None:
    add_missing_columns(connection, incidents, TRIAGE_COLUMNS)
    add_missing_columns(connection, mutes, ["fingerprint"])
    incident_events.create(connection, checkfirst=True)
    widen_for_mysql(connection, [incident_events])


def _v11_groups(connection: Connection) -> None:
    add_missing_columns(connection, incidents, ["group_key"])
    create_missing_index(connection, incidents, "ix_dq_incidents_group")
    add_missing_columns(connection, notifications, ["thread_incident_id"])


def _v13_installation(connection: Connection) -> None:
    installation.create(connection, checkfirst=True)
    if connection.execute(sa.select(installation.c.id)).first() is None:
        connection.execute(installation.insert().values(id=uuid.uuid4().hex, created_at=utc_now()))


MIGRATIONS = [
    Migration(1, "alerting", _v1_initial),
    Migration(3, "alerting", _v3_one_open_incident),
    Migration(4, "alerting", _v4_delivery_leases),
    Migration(8, "alerting", _v8_effective_level),
    Migration(10, "alerting", _v10_triage),
    Migration(11, "alerting", _v11_groups),
    Migration(13, "alerting", _v13_installation),
]
