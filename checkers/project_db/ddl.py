"""What migration steps do to a table that exists: add the columns and indexes it lacks, widen
the columns the first migrations created too narrow on MariaDB. A fresh database gets a table
as defined now, so every step adds only what is missing."""

from __future__ import annotations

from collections.abc import Iterable

import sqlalchemy as sa
from sqlalchemy.engine import Connection


def add_missing_columns(connection: Connection, table: sa.Table, names: Iterable[str]) -> None:
    """ALTER TABLE ... ADD COLUMN for each of `names` the table lacks, as `table` defines it."""
    present = {c["name"] for c in sa.inspect(connection).get_columns(table.name)}
    for name in names:
        if name not in present:
            spec = sa.schema.CreateColumn(table.c[name]).compile(dialect=connection.dialect)
            connection.exec_driver_sql(f"ALTER TABLE {table.name} ADD COLUMN {spec}")


def create_missing_index(connection: Connection, table: sa.Table, name: str) -> None:
    """Create the index `name` of `table` unless the database has it."""
    if name not in {i["name"] for i in sa.inspect(connection).get_indexes(table.name)}:
        next(i for i in table.indexes if i.name == name).create(connection)


def widen_for_mysql(connection: Connection, tables: Iterable[sa.Table]) -> None:
    """MariaDB/MySQL: DATETIME(6) (window starts key claims) and LONGTEXT (outcomes can pass
    TEXT's 64 KiB) for the columns the first migrations created there as DATETIME and TEXT."""
    if connection.dialect.name not in ("mysql", "mariadb"):
        return
    inspector = sa.inspect(connection)
    for table in tables:
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
