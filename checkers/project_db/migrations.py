"""The migration registry: numbered versions applied in order and recorded in
dq_schema_versions. Packages contribute the steps of their tables (`Migration`); `compose` joins
them into one list, a version's steps in the order the packages are given. Add, never edit."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

from checkers.project_db.clock import utc_now
from checkers.project_db.columns import UtcDateTime

Step = Callable[[Connection], None]
#: The composed registry: one step per version, in version order.
MigrationList = Sequence[tuple[int, Step]]

_metadata = sa.MetaData()
schema_versions = sa.Table(
    "dq_schema_versions",
    _metadata,
    sa.Column("version", sa.Integer, primary_key=True),
    sa.Column("applied_at", UtcDateTime, nullable=False),
)


@dataclass(frozen=True)
class Migration:
    """What one package does at a numbered version (its part of that version's migration)."""

    version: int
    package: str
    step: Step


@dataclass(frozen=True)
class _Version:
    """The steps of every package at one version, run in turn in one transaction."""

    parts: tuple[Migration, ...]

    def __call__(self, connection: Connection) -> None:
        for part in self.parts:
            part.step(connection)

    def __repr__(self) -> str:
        return f"v{self.parts[0].version}({', '.join(p.package for p in self.parts)})"


def compose(*contributions: Iterable[Migration]) -> list[tuple[int, Step]]:
    """One registry from the packages' migrations; versions run 1, 2, 3... without a gap."""
    by_version: dict[int, list[Migration]] = {}
    for contribution in contributions:
        for migration in contribution:
            by_version.setdefault(migration.version, []).append(migration)
    versions = sorted(by_version)
    if versions != list(range(1, len(versions) + 1)):
        raise ValueError(f"migration versions must run 1, 2, 3... without a gap: {versions}")
    return [(v, _Version(tuple(by_version[v]))) for v in versions]


def migrate(engine: Engine, migrations: MigrationList) -> int:
    """Apply pending migrations; returns the schema version. Processes that start together
    migrate one after the other (SQLite: BEGIN IMMEDIATE; others: a named lock)."""
    with engine.begin() as connection, _migration_lock(connection):
        schema_versions.create(connection, checkfirst=True)
        applied = set(connection.execute(sa.select(schema_versions.c.version)).scalars())
        for version, step in migrations:
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
