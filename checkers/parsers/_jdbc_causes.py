"""Why a JDBC read failed, in the words a person acts on. Spark reports every failed connection
as "Couldn't connect to the database"; the cause (a refused port, a missing database, a refused
login) is found again from the driver's side: a TCP connect, then a login with the Python driver,
whose SQLState or vendor code says which. A missing table is read from the error's text."""

from __future__ import annotations

import re
import socket
import urllib.parse
from dataclasses import dataclass

_NO_TABLE = (
    re.compile(r'relation "([^"]+)" does not exist'),  # PostgreSQL, SQLState 42P01
    re.compile(r"Table '([^']+)' doesn't exist"),  # MariaDB/MySQL, vendor code 1146
)
#: SQLStates (PostgreSQL) and vendor codes (MariaDB/MySQL) of a login the server refused.
_DENIED = {"28000", "28P01", 1044, 1045, 1698}
_NO_DATABASE = {"3D000", 1049}


@dataclass(frozen=True)
class Target:
    """Where a JDBC URL points, and who logs in."""

    subprotocol: str
    host: str
    port: int
    database: str
    user: str | None
    password: str | None

    @classmethod
    def of(cls, jdbc_url: str, user: str | None, password: str | None) -> Target | None:
        parts = urllib.parse.urlsplit(jdbc_url.removeprefix("jdbc:"))
        defaults = {"postgresql": 5432, "mysql": 3306, "mariadb": 3306}
        if parts.scheme not in defaults or not parts.hostname:
            return None
        port = parts.port or defaults[parts.scheme]
        database = parts.path.strip("/")
        return cls(parts.scheme, parts.hostname, port, database, user, password)


def cause(reason: str, target: Target | None, timeout_s: float) -> str | None:
    """What `reason` (Spark's message) means, or None when it says it already."""
    for pattern in _NO_TABLE:
        if found := pattern.search(reason):
            return f"no table {found.group(1)}"
    if target is None or "Couldn't connect" not in reason:
        return None
    try:
        socket.create_connection((target.host, target.port), timeout=timeout_s).close()
    except ConnectionRefusedError:
        return f"connection refused at {target.host}:{target.port}"
    except OSError as exc:
        return f"cannot reach {target.host}:{target.port} ({exc.strerror or type(exc).__name__})"
    return _login(target, timeout_s)


def _login(target: Target, timeout_s: float) -> str | None:
    code = _refusal(target, timeout_s)
    if code in _NO_DATABASE:
        return f"database {target.database} does not exist"
    if code in _DENIED:
        return f"access denied for user {target.user or '(none)'}"
    return None


def _refusal(target: Target, timeout_s: float) -> str | int | None:
    """The SQLState or vendor code of the driver's refusal; None when it logs in or is absent."""
    seconds = max(1, round(timeout_s))
    try:
        if target.subprotocol == "postgresql":
            import psycopg

            try:
                psycopg.connect(
                    host=target.host,
                    port=target.port,
                    dbname=target.database,
                    user=target.user or "",
                    password=target.password or "",
                    connect_timeout=seconds,
                ).close()
            except psycopg.Error as exc:
                return exc.sqlstate or _postgres_state(str(exc))
            return None
        import pymysql

        try:
            pymysql.connect(
                host=target.host,
                port=target.port,
                database=target.database or None,
                user=target.user or "",
                password=target.password or "",
                connect_timeout=seconds,
            ).close()
        except pymysql.err.MySQLError as exc:
            return exc.args[0] if exc.args and isinstance(exc.args[0], int) else None
        return None
    except ImportError:
        return None


def _postgres_state(message: str) -> str | None:
    # libpq reports a refused startup as text only: the server's FATAL message
    if re.search(r'database "[^"]*" does not exist', message):
        return "3D000"
    if re.search(r"password authentication failed|role \"[^\"]*\" does not exist", message):
        return "28P01"
    return None
