"""The one place that asks the system clock, the database's clock that leases share, and reading
back the datetimes the project database stored."""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Callable
from typing import overload

from sqlalchemy.engine import Connection, Engine


def utc_now() -> dt.datetime:
    """The one place that asks the system clock; everything else takes `now`."""
    return dt.datetime.now(dt.UTC)


@overload
def as_utc(value: dt.datetime) -> dt.datetime: ...
@overload
def as_utc(value: None) -> None: ...
@overload
def as_utc(value: dt.datetime | None) -> dt.datetime | None: ...


def as_utc(value: dt.datetime | None) -> dt.datetime | None:
    """Datetimes read back from SQLite lose their zone; they were written in UTC."""
    if value is None:
        return None
    return value.replace(tzinfo=dt.UTC) if value.tzinfo is None else value.astimezone(dt.UTC)


def database_now(connection: Connection) -> dt.datetime:
    """The database server's time (UTC): the one clock every process sharing the database
    agrees on, whatever their own clocks or `--at` say (leases of claims and outbox rows)."""
    dialect = connection.dialect.name
    if dialect == "sqlite":  # the file is local: its clock is this machine's
        text = connection.exec_driver_sql("SELECT strftime('%Y-%m-%d %H:%M:%f', 'now')").scalar()
        return dt.datetime.fromisoformat(str(text)).replace(tzinfo=dt.UTC)
    query = "SELECT UTC_TIMESTAMP(6)" if dialect in ("mysql", "mariadb") else "SELECT now()"
    found = as_utc(connection.exec_driver_sql(query).scalar())
    assert found is not None
    return found


def database_clock(engine: Engine) -> Callable[[], dt.datetime]:
    """A clock reading the database's time once, then advancing it by this process's monotonic
    clock (no query per reading; a lease lasts minutes, drift over a run is negligible)."""
    with engine.connect() as connection:
        base = database_now(connection)
    started = time.monotonic()
    return lambda: base + dt.timedelta(seconds=time.monotonic() - started)
