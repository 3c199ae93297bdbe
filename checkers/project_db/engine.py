"""An engine on the project database: `DQ_DATABASE_URL`, else `.dq/dq.db` (SQLite). SQLite takes
its write lock up front and waits for another process's; servers get connect and read timeouts.
No migration here: scheduling.schema.project_database migrates."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

from checkers.private_files import private_file

DATABASE_ENV = "DQ_DATABASE_URL"
DEFAULT_DATABASE = ".dq/dq.db"
#: SQLite waits this long for another process's write lock before "database is locked".
SQLITE_BUSY_TIMEOUT_S = 30.0
#: A project database that accepts connections and never answers must not hold a run forever
#: (the run spools instead: scheduling/outage.py).
PROJECT_CONNECT_TIMEOUT_S = 10
PROJECT_READ_TIMEOUT_S = 60


def database_url(url: str | None = None) -> str:
    return url or os.environ.get(DATABASE_ENV) or f"sqlite:///{Path(DEFAULT_DATABASE).resolve()}"


def database_engine(url: str | None = None) -> Engine:
    """An engine on the project database (a SQLite file's folder is created); not migrated."""
    resolved = database_url(url)
    if resolved.startswith("sqlite:///") and not _in_memory(resolved):
        private_file(resolved.removeprefix("sqlite:///").split("?")[0])  # it holds row samples
    parsed = sa.engine.make_url(resolved)
    if parsed.get_backend_name() == "sqlite":
        return _sqlite_engine(resolved)
    return sa.create_engine(resolved, pool_pre_ping=True, connect_args=timeouts(parsed))


def _in_memory(url: str) -> bool:
    path = url.removeprefix("sqlite:///").split("?")[0]
    return path in ("", ":memory:") or path.startswith("file::memory:")


def timeouts(url: sa.engine.URL) -> dict[str, object]:
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
    (busy timeout) instead of failing with "database is locked". The file is in WAL mode with
    synchronous=NORMAL (write_ahead_log)."""
    engine = sa.create_engine(url, connect_args={"timeout": SQLITE_BUSY_TIMEOUT_S})

    @sa.event.listens_for(engine, "connect")
    def _no_implicit_begin(dbapi_connection: sqlite3.Connection, _record: object) -> None:
        dbapi_connection.isolation_level = None
        write_ahead_log(dbapi_connection)

    @sa.event.listens_for(engine, "begin")
    def _begin_immediate(connection: Connection) -> None:
        connection.exec_driver_sql("BEGIN IMMEDIATE")

    return engine


def write_ahead_log(connection: sqlite3.Connection) -> bool:
    """Put the file in WAL mode (it stays so) and commit with synchronous=NORMAL: a commit
    appends to the `-wal` file without waiting for the disk, so a delivery run's commits cost
    microseconds, not a disk flush each (on a busy disk, tens of milliseconds). A killed process
    loses nothing committed; a power cut or an OS crash may lose the last commits, never the
    file. Readers no longer wait for the writer. A file that cannot switch now (read-only, or
    another process holds it) keeps its mode until a later connection; False then. SQLite
    creates `-wal` and `-shm` with the database file's permissions (owner-only)."""
    mode = str(connection.execute("PRAGMA journal_mode").fetchone()[0]).lower()
    if mode not in ("wal", "memory"):
        try:
            mode = str(connection.execute("PRAGMA journal_mode=WAL").fetchone()[0]).lower()
        except sqlite3.OperationalError:  # read-only, or locked by another process
            return False
    if mode == "wal":
        connection.execute("PRAGMA synchronous=NORMAL")
    return mode == "wal"
