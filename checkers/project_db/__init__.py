"""The project database without its tables: the engine (SQLite by default, PostgreSQL or MariaDB
in production), the clock, column types every package's tables share, and the migration
registry. Each package owns its tables and migration steps; scheduling/schema.py composes them."""

from checkers.project_db.clock import as_utc, database_clock, database_now, utc_now
from checkers.project_db.columns import LongText, UtcDateTime
from checkers.project_db.engine import (
    DATABASE_ENV,
    DEFAULT_DATABASE,
    database_engine,
    database_url,
)
from checkers.project_db.migrations import (
    Migration,
    MigrationList,
    compose,
    migrate,
    schema_versions,
)

__all__ = [
    "DATABASE_ENV",
    "DEFAULT_DATABASE",
    "LongText",
    "Migration",
    "MigrationList",
    "UtcDateTime",
    "as_utc",
    "compose",
    "database_clock",
    "database_engine",
    "database_now",
    "database_url",
    "migrate",
    "schema_versions",
    "utc_now",
]
