"""The project database (SQLAlchemy): one schema for run history, incidents, the notification
outbox, receiver threads, mutes, window claims, the readiness of guarded assets and the stored
partition states of incremental checks, with numbered migrations. SQLite by default
(`DQ_DATABASE_URL`, else `.dq/dq.db`), PostgreSQL or MariaDB in production. No Spark here."""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import sqlalchemy as sa
from sqlalchemy.dialects import mysql
from sqlalchemy.engine import Connection, Engine

DATABASE_ENV = "DQ_DATABASE_URL"
DEFAULT_DATABASE = ".dq/dq.db"
#: SQLite waits this long for another process's write lock before "database is locked".
SQLITE_BUSY_TIMEOUT_S = 30.0

metadata = sa.MetaData()
# MariaDB's DATETIME drops microseconds (window starts key claims): ask for DATETIME(6).
UtcDateTime = sa.DateTime(timezone=True).with_variant(mysql.DATETIME(fsp=6), "mysql", "mariadb")
LongText = sa.Text().with_variant(mysql.LONGTEXT(), "mysql", "mariadb")

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
    # = fingerprint while open, NULL once resolved: the unique index allows one open incident
    # per fingerprint (NULLs may repeat on SQLite, PostgreSQL and MariaDB alike). Migration 3.
    sa.Column("open_fingerprint", sa.String(64)),
    sa.Index("ux_dq_incidents_open_fingerprint", "open_fingerprint", unique=True),
    # The level alerting last decided (escalation included) while the incident was open: what
    # its notifications said. NULL for incidents recorded before migration 8.
    sa.Column("effective_level", sa.Integer),
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


claims = sa.Table(
    "dq_claims",
    metadata,
    # One claim per (check, window start): concurrent runs at slightly different times compute
    # windows with the same start (the check's last window end), an Airflow retry the same one.
    sa.Column("check_name", sa.String(200), primary_key=True),
    sa.Column("window_start", UtcDateTime, primary_key=True),
    sa.Column("window_end", UtcDateTime, nullable=False),
    sa.Column("holder", sa.String(200), nullable=False),  # host:pid:token
    sa.Column("status", sa.String(20), nullable=False),  # running | done
    sa.Column("claimed_at", UtcDateTime, nullable=False),
    sa.Column("lease_until", UtcDateTime, nullable=False),
    sa.Column("finished_at", UtcDateTime),
    sa.Column("run_id", sa.Integer),  # the dq_runs row that recorded the window
    sa.Column("outcome_status", sa.String(20)),
)

#: Per guarded asset, the latest verdict on it (scheduling/tick/readiness.py): ready after a
#: PASSED or TOLERATED run, not ready after a FAILED or ERROR one. Migration 6.
readiness = sa.Table(
    "dq_readiness",
    metadata,
    sa.Column("asset", sa.String(200), primary_key=True),
    sa.Column("check_name", sa.String(200), nullable=False),
    sa.Column("ready", sa.Boolean, nullable=False),
    sa.Column("status", sa.String(20), nullable=False),  # the outcome's status
    sa.Column("window_start", UtcDateTime),
    sa.Column("window_end", UtcDateTime, nullable=False),
    sa.Column("run_id", sa.Integer),  # the dq_runs row of the verdict
    sa.Column("marker", sa.Text),  # the marker file beside the data, when there is one
    sa.Column("error", sa.Text),  # why the marker could not be written or removed
    sa.Column("updated_at", UtcDateTime, nullable=False),
)

# Incremental checks (checks/incremental_run.py), migration 7. Per (check, partition): the
# fingerprint of the data whose states are stored and the check definition they were computed
# under; written after the states, so a crash in between only means recomputing the partition.
partitions = sa.Table(
    "dq_partitions",
    metadata,
    sa.Column("check_name", sa.String(200), primary_key=True),
    sa.Column("partition_key", sa.String(400), primary_key=True),
    sa.Column("fingerprint", sa.String(64), nullable=False),
    sa.Column("definition", sa.String(64), nullable=False),
    sa.Column("rows", sa.BigInteger),
    sa.Column("partition_ts", UtcDateTime),
    sa.Column("data_schema", sa.Text),  # the source's schema (JSON): no read when nothing changed
    sa.Column("updated_at", UtcDateTime, nullable=False),
)

#: One analyzer state per (check, partition); the analyzer's text key is hashed for the primary
#: key (MariaDB limits key length). Frequency tables live as Parquet under DQ_STATE_DIR.
partition_states = sa.Table(
    "dq_partition_states",
    metadata,
    sa.Column("check_name", sa.String(200), primary_key=True),
    sa.Column("partition_key", sa.String(400), primary_key=True),
    sa.Column("analyzer_digest", sa.String(64), primary_key=True),
    sa.Column("analyzer", sa.Text, nullable=False),
    sa.Column("format_version", sa.String(16), nullable=False),
    sa.Column("kind", sa.String(64), nullable=False),
    sa.Column("payload", LongText, nullable=False),
    sa.Column("updated_at", UtcDateTime, nullable=False),
)


def _v1_initial(connection: Connection) -> None:
    metadata.create_all(
        connection,
        tables=[runs, incidents, notifications, receiver_threads, mutes],
    )


def _v2_scheduler_windows(connection: Connection) -> None:
    scheduler_windows.create(connection)


def _widen_for_mysql(connection: Connection) -> None:
    """MariaDB/MySQL: DATETIME(6) (window starts key claims) and LONGTEXT (outcomes can pass
    TEXT's 64 KiB) for the columns the first migrations created there as DATETIME and TEXT."""
    inspector = sa.inspect(connection)
    for table in (runs, incidents, notifications, receiver_threads, mutes, scheduler_windows):
        existing = {c["name"] for c in inspector.get_columns(table.name)}
        for column in table.columns:
            if column.name not in existing:
                continue  # added to the table by a later migration
            if isinstance(column.type, sa.DateTime):
                kind = "DATETIME(6)"
            elif isinstance(column.type, sa.Text):
                kind = "LONGTEXT"
            else:
                continue
            null = "NULL" if column.nullable else "NOT NULL"
            connection.exec_driver_sql(
                f"ALTER TABLE {table.name} MODIFY {column.name} {kind} {null}"
            )


def _v3_claims_and_open_incidents(connection: Connection) -> None:
    claims.create(connection, checkfirst=True)
    inspector = sa.inspect(connection)
    column = incidents.c.open_fingerprint
    if column.name not in {c["name"] for c in inspector.get_columns(incidents.name)}:
        kind = column.type.compile(dialect=connection.dialect)
        connection.exec_driver_sql(f"ALTER TABLE {incidents.name} ADD {column.name} {kind}")
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
    index = next(i for i in incidents.indexes if i.name == "ux_dq_incidents_open_fingerprint")
    if index.name not in {i["name"] for i in inspector.get_indexes(incidents.name)}:
        index.create(connection)
    if connection.dialect.name in ("mysql", "mariadb"):
        _widen_for_mysql(connection)


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


def _v6_readiness(connection: Connection) -> None:
    readiness.create(connection, checkfirst=True)


def _v7_partitions(connection: Connection) -> None:
    partitions.create(connection, checkfirst=True)
    partition_states.create(connection, checkfirst=True)


def _v8_effective_level(connection: Connection) -> None:
    inspector = sa.inspect(connection)
    column = incidents.c.effective_level
    if column.name not in {c["name"] for c in inspector.get_columns(incidents.name)}:
        compiler = connection.dialect.ddl_compiler(connection.dialect, None)  # type: ignore[arg-type]
        spec = compiler.get_column_specification(column)
        connection.exec_driver_sql(f"ALTER TABLE {incidents.name} ADD COLUMN {spec}")


#: Numbered migrations, applied in order and recorded in dq_schema_versions. Add, never edit.
#: A fresh database gets later columns of a table already from migration 1 (which creates the
#: tables as defined now), so later migrations add columns and indexes only when missing.
MIGRATIONS: list[tuple[int, Callable[[Connection], None]]] = [
    (1, _v1_initial),
    (2, _v2_scheduler_windows),
    (3, _v3_claims_and_open_incidents),
    (4, _v4_delivery_leases),
    (5, _v5_spool_replays),
    (6, _v6_readiness),
    (7, _v7_partitions),
    (8, _v8_effective_level),
]


def migrate(engine: Engine) -> int:
    """Apply pending migrations; returns the schema version. Processes that start together
    migrate one after the other (SQLite: BEGIN IMMEDIATE; others: a named lock)."""
    with engine.begin() as connection, _migration_lock(connection):
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


@contextmanager
def _migration_lock(connection: Connection) -> Iterator[None]:
    """PostgreSQL: an advisory lock held to the end of the transaction. MariaDB, whose DDL
    commits by itself: a named lock of the session, released explicitly (pooled connections
    live on)."""
    name = connection.dialect.name
    if name == "postgresql":
        connection.execute(sa.text("SELECT pg_advisory_xact_lock(4242024011)"))
    elif name in ("mysql", "mariadb"):
        connection.execute(sa.text("SELECT GET_LOCK('dq_checkers_migrate', 300)"))
    try:
        yield
    finally:
        if name in ("mysql", "mariadb"):
            connection.execute(sa.text("SELECT RELEASE_LOCK('dq_checkers_migrate')"))


def database_url(url: str | None = None) -> str:
    return url or os.environ.get(DATABASE_ENV) or f"sqlite:///{Path(DEFAULT_DATABASE).resolve()}"


def project_database(url: str | None = None) -> Engine:
    """An engine on the project database, migrated to the current schema."""
    resolved = database_url(url)
    if resolved.startswith("sqlite:///"):
        Path(resolved.removeprefix("sqlite:///")).parent.mkdir(parents=True, exist_ok=True)
    parsed = sa.engine.make_url(resolved)
    if parsed.get_backend_name() == "sqlite":
        engine = _sqlite_engine(resolved)
    else:
        engine = sa.create_engine(resolved, pool_pre_ping=True, connect_args=_timeouts(parsed))
    migrate(engine)
    return engine


#: A project database that accepts connections and never answers must not hold a run forever
#: (the run spools instead: scheduling/outage.py).
PROJECT_CONNECT_TIMEOUT_S = 10
PROJECT_READ_TIMEOUT_S = 60


def _timeouts(url: sa.engine.URL) -> dict[str, object]:
    """Connect (and, for PyMySQL, read) timeouts unless the URL sets its own."""
    given = set(url.query)
    found: dict[str, object] = {}
    if url.get_backend_name() in ("postgresql", "mysql", "mariadb"):
        found["connect_timeout"] = PROJECT_CONNECT_TIMEOUT_S
    if url.get_driver_name() == "pymysql":
        found["read_timeout"] = PROJECT_READ_TIMEOUT_S
        found["write_timeout"] = PROJECT_READ_TIMEOUT_S
    return {k: v for k, v in found.items() if k not in given}


def _sqlite_engine(url: str) -> Engine:
    """Every transaction starts with BEGIN IMMEDIATE (the write lock up front), so two processes
    never deadlock upgrading a read lock to a write lock; a writer waits for the other's lock
    (busy timeout) instead of failing with "database is locked"."""
    engine = sa.create_engine(url, connect_args={"timeout": SQLITE_BUSY_TIMEOUT_S})

    @sa.event.listens_for(engine, "connect")
    def _no_implicit_begin(dbapi_connection: object, _record: object) -> None:
        dbapi_connection.isolation_level = None  # type: ignore[attr-defined]

    @sa.event.listens_for(engine, "begin")
    def _begin_immediate(connection: Connection) -> None:
        connection.exec_driver_sql("BEGIN IMMEDIATE")

    return engine


def utc_now() -> dt.datetime:
    """The one place that asks the system clock; everything else takes `now`."""
    return dt.datetime.now(dt.UTC)


def as_utc(value: dt.datetime | None) -> dt.datetime | None:
    """Datetimes read back from SQLite lose their zone; they were written in UTC."""
    if value is None:
        return None
    return value.replace(tzinfo=dt.UTC) if value.tzinfo is None else value.astimezone(dt.UTC)
