"""The project database's schema: every package's migrations composed into one registry, applied
in one order, and `project_database`, an engine migrated to it. Here because only the top of the
package graph may import every package that owns a table."""

from __future__ import annotations

from sqlalchemy.engine import Engine

from alerting import tables as alerting_tables
from checkers import engine_tables
from checkers.project_db import compose, database_engine
from checkers.project_db import migrate as apply_migrations
from scheduling import tables as scheduling_tables
from scheduling.tick import readiness_table

#: Numbered migrations, applied in order and recorded in dq_schema_versions. Add, never edit.
#: At a version shared by several packages, their steps run in the order given here.
MIGRATIONS = compose(
    scheduling_tables.MIGRATIONS,
    alerting_tables.MIGRATIONS,
    readiness_table.MIGRATIONS,
    engine_tables.MIGRATIONS,
)


def migrate(engine: Engine) -> int:
    """Apply pending migrations of MIGRATIONS; returns the schema version."""
    return apply_migrations(engine, MIGRATIONS)


def project_database(url: str | None = None) -> Engine:
    """An engine on the project database, migrated to the current schema."""
    engine = database_engine(url)
    migrate(engine)
    return engine
