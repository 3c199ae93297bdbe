"""A fresh, empty project database per test on SQLite, PostgreSQL or MariaDB (the servers are
shared with other test runs: each test gets a uniquely named database, dropped afterwards)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import sqlalchemy as sa

from tests.conftest import MARIADB_URL, POSTGRES_URL

KINDS = [
    "sqlite",
    pytest.param("postgres", marks=pytest.mark.postgres),
    pytest.param("mariadb", marks=pytest.mark.mariadb),
]


@contextmanager
def fresh_database(kind: str, directory: Path) -> Iterator[str]:
    """The URL of a new empty database of `kind`."""
    if kind == "sqlite":
        yield f"sqlite:///{directory / 'dq.db'}"
        return
    server = sa.make_url(POSTGRES_URL if kind == "postgres" else MARIADB_URL)
    name = f"dq_{uuid.uuid4().hex[:16]}"
    admin = sa.create_engine(server, isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        connection.exec_driver_sql(f"CREATE DATABASE {name}")
    try:
        yield server.set(database=name).render_as_string(hide_password=False)
    finally:
        force = " WITH (FORCE)" if kind == "postgres" else ""
        with admin.connect() as connection:
            connection.exec_driver_sql(f"DROP DATABASE {name}{force}")
        admin.dispose()


def run_sql(url: str, *statements: str) -> None:
    """Run `statements` in one transaction on the database at `url`."""
    engine = sa.create_engine(url)
    with engine.begin() as connection:
        for statement in statements:
            connection.exec_driver_sql(statement)
    engine.dispose()
