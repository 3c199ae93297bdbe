"""A SQLAlchemy engine whose driver gives up at the source's deadline: connect and statement
timeouts by dialect (PostgreSQL, MariaDB/MySQL, SQLite). Options the URL already carries win."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import sqlalchemy as sa

from checkers.deadlines import Deadline

# libpq and PyMySQL take whole or fractional seconds; libpq treats anything under 2 s as 2 s.
_PG_DRIVERS = {"psycopg", "psycopg2", "psycopg2cffi"}
_MYSQL_DRIVERS = {"pymysql", "mysqldb"}
#: A server that is still busy gets this long past the deadline to report it has cancelled the
#: statement itself (a clear error, its resources freed) before the client stops listening.
_READ_GRACE_S = 1.0


def _postgres(query: Mapping[str, Any], seconds: float) -> dict[str, object]:
    args: dict[str, object] = {}
    if "connect_timeout" not in query:
        args["connect_timeout"] = max(2, math.ceil(seconds))
    given = query.get("options", "")
    given = " ".join(given) if isinstance(given, tuple) else str(given)
    if "statement_timeout" not in given:
        limit = f"-c statement_timeout={max(1, math.ceil(seconds * 1000))}"
        args["options"] = f"{given} {limit}".strip()
    return args


def _mysql(query: Mapping[str, Any], seconds: float, driver: str) -> dict[str, object]:
    # mysqlclient wants whole seconds; PyMySQL takes fractions. Without a read timeout a server
    # that accepts the connection and stays silent would hold the load forever.
    def seconds_for(value: float) -> float | int:
        return value if driver == "pymysql" else math.ceil(value)

    timeouts = {
        "connect_timeout": seconds,
        "read_timeout": seconds + _READ_GRACE_S,
        "write_timeout": seconds + _READ_GRACE_S,
    }
    return {k: seconds_for(v) for k, v in timeouts.items() if k not in query}


def _limit_mysql_statements(deadline: Deadline) -> Any:
    def on_connect(dbapi_connection: Any, _record: object) -> None:
        seconds = max(deadline.remaining(), 0.001)  # 0 would switch the limit off
        cursor = dbapi_connection.cursor()
        try:
            if "mariadb" in dbapi_connection.get_server_info().lower():
                cursor.execute(f"SET SESSION max_statement_time = {seconds:.3f}")
            else:  # MySQL: SELECT statements only, in milliseconds
                cursor.execute(f"SET SESSION max_execution_time = {math.ceil(seconds * 1000)}")
        finally:
            cursor.close()

    return on_connect


def _limit_sqlite_statements(deadline: Deadline) -> Any:
    # SQLite has no statement timeout: a progress handler that returns true interrupts the
    # statement ("interrupted"), checked every few thousand virtual machine steps.
    def on_connect(dbapi_connection: Any, _record: object) -> None:
        dbapi_connection.set_progress_handler(lambda: deadline.expired, 10_000)

    return on_connect


def engine_within(url: str, deadline: Deadline) -> sa.Engine:
    """An engine for `url` whose connections time out by `deadline` (unknown drivers: as given)."""
    parsed = sa.engine.make_url(url)
    backend, driver = parsed.get_backend_name(), parsed.get_driver_name()
    seconds = max(deadline.remaining(), 0.001)
    query = dict(parsed.query)
    if backend == "postgresql" and driver in _PG_DRIVERS:
        return sa.create_engine(url, connect_args=_postgres(query, seconds))
    if backend in {"mysql", "mariadb"} and driver in _MYSQL_DRIVERS:
        engine = sa.create_engine(url, connect_args=_mysql(query, seconds, driver))
        sa.event.listen(engine, "connect", _limit_mysql_statements(deadline))
        return engine
    if backend == "sqlite":
        args = {} if "timeout" in query else {"timeout": seconds}  # busy (lock) timeout
        engine = sa.create_engine(url, connect_args=args)
        sa.event.listen(engine, "connect", _limit_sqlite_statements(deadline))
        return engine
    return sa.create_engine(url)
