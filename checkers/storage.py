"""The project database (SQLAlchemy): one schema for run history, incidents, the notification
outbox, receiver threads and mutes, with numbered migrations. SQLite by default
(`DQ_DATABASE_URL`, else `.dq/dq.db`), PostgreSQL in production. No Spark here."""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Callable
from pathlib import Path

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

DATABASE_ENV = "DQ_DATABASE_URL"
DEFAULT_DATABASE = ".dq/dq.db"

metadata = sa.MetaData()
UtcDateTime = sa.DateTime(timezone=True)

schema_versions = sa.Table(
    "dq_schema_versions",
    metadata,
    sa.Column("version", sa.Integer, primary_key=True),
    sa.Column("applied_at", UtcDateTime, nullable=False),
)

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
    sa.Column("status", sa.String(20), nullable=False),  # pending | sent | suppressed | failed
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

scheduler_windows = sa.Table(
    "dq_scheduler_windows",
    metadata,
    sa.Column("check_name", sa.String(200), primary_key=True),
    sa.Column("last_window_end", UtcDateTime, nullable=False),
)

#: Spool entries already recorded (scheduling/spool.py): a replay cut short by a crash skips them.
spool_replays = sa.Table(
    "dq_spool_replays",
    metadata,
    sa.Column("entry_id", sa.String(64), primary_key=True),
    sa.Column("check_name", sa.String(200), nullable=False),
    sa.Column("replayed_at", UtcDateTime, nullable=False),
)


def _v1_initial(connection: Connection) -> None:
    metadata.create_all(
        connection,
        tables=[runs, incidents, notifications, receiver_threads, mutes],
    )


def _v2_scheduler_windows(connection: Connection) -> None:
    scheduler_windows.create(connection)


def _v4_delivery_leases(connection: Connection) -> None:
    # v1 creates tables from the current definitions: add only what an older database lacks
    inspector = sa.inspect(connection)
    present = {c["name"] for c in inspector.get_columns(notifications.name)}
    compiler = connection.dialect.ddl_compiler(connection.dialect, None)  # type: ignore[arg-type]
    for name in ("lease_holder", "lease_until", "step_started", "step_started_at"):
        if name not in present:
            spec = compiler.get_column_specification(notifications.c[name])
            connection.exec_driver_sql(f"ALTER TABLE {notifications.name} ADD COLUMN {spec}")
    indexes = {i["name"] for i in inspector.get_indexes(notifications.name)}
    thread_index = next(i for i in notifications.indexes if i.name == "ix_dq_notifications_thread")
    if thread_index.name not in indexes:
        thread_index.create(connection)
    receiver_backoff.create(connection, checkfirst=True)


def _v5_spool_replays(connection: Connection) -> None:
    spool_replays.create(connection)


#: Numbered migrations, applied in order and recorded in dq_schema_versions. Add, never edit.
MIGRATIONS: list[tuple[int, Callable[[Connection], None]]] = [
    (1, _v1_initial),
    (2, _v2_scheduler_windows),
    (4, _v4_delivery_leases),
    (5, _v5_spool_replays),
]


def migrate(engine: Engine) -> int:
    """Apply pending migrations; returns the schema version."""
    with engine.begin() as connection:
        schema_versions.create(connection, checkfirst=True)
        applied = set(connection.execute(sa.select(schema_versions.c.version)).scalars())
        for version, step in MIGRATIONS:
            if version not in applied:
                step(connection)
                connection.execute(
                    schema_versions.insert().values(version=version, applied_at=utc_now())
                )
                applied.add(version)
    return max(applied)


def database_url(url: str | None = None) -> str:
    return url or os.environ.get(DATABASE_ENV) or f"sqlite:///{Path(DEFAULT_DATABASE).resolve()}"


def project_database(url: str | None = None) -> Engine:
    """An engine on the project database, migrated to the current schema."""
    resolved = database_url(url)
    if resolved.startswith("sqlite:///"):
        Path(resolved.removeprefix("sqlite:///")).parent.mkdir(parents=True, exist_ok=True)
    engine = sa.create_engine(resolved)
    migrate(engine)
    return engine


def utc_now() -> dt.datetime:
    """The one place that asks the system clock; everything else takes `now`."""
    return dt.datetime.now(dt.UTC)


def as_utc(value: dt.datetime | None) -> dt.datetime | None:
    """Datetimes read back from SQLite lose their zone; they were written in UTC."""
    if value is None:
        return None
    return value.replace(tzinfo=dt.UTC) if value.tzinfo is None else value.astimezone(dt.UTC)
