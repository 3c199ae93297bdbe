"""The project database's composed schema: one registry over every package's tables, and the
metric history and engine states brought under migration 9 (created on a fresh database; a
database that had them keeps them: tests/upgrade)."""

from __future__ import annotations

import pytest
import sqlalchemy as sa

from scheduling.schema import MIGRATIONS, project_database
from tests.scheduling.databases import KINDS, fresh_database

TABLES = {
    "dq_schema_versions",
    "dq_runs",
    "dq_claims",
    "dq_scheduler_windows",
    "dq_spool_replays",
    "dq_incidents",
    "dq_notifications",
    "dq_receiver_threads",
    "dq_mutes",
    "dq_receiver_backoff",
    "dq_readiness",
    "dq_partitions",
    "dq_partition_states",
}
#: Keys longer than MariaDB allows (3,072 bytes in utf8mb4): not created there.
HISTORY_AND_STATES = {"dq_metrics", "dq_states"}


def test_the_registry_numbers_every_version_once():
    assert [version for version, _ in MIGRATIONS] == list(range(1, 10))


@pytest.mark.parametrize("kind", KINDS)
def test_a_fresh_database_gets_every_packages_tables(kind, tmp_path):
    with fresh_database(kind, tmp_path) as url:
        engine = project_database(url)
        try:
            found = set(sa.inspect(engine).get_table_names())
            expected = TABLES if kind == "mariadb" else TABLES | HISTORY_AND_STATES
            assert found == expected
            with engine.connect() as connection:
                versions = connection.exec_driver_sql("SELECT version FROM dq_schema_versions")
                assert sorted(versions.scalars()) == list(range(1, 10))
        finally:
            engine.dispose()


def test_migration_9_creates_history_and_states_a_database_never_had(tmp_path, monkeypatch):
    from scheduling.schema import migrate

    engine = sa.create_engine(f"sqlite:///{tmp_path / 'dq.db'}")
    monkeypatch.setattr("scheduling.schema.MIGRATIONS", MIGRATIONS[:8])
    assert migrate(engine) == 8
    assert not HISTORY_AND_STATES & set(sa.inspect(engine).get_table_names())
    monkeypatch.undo()
    assert migrate(engine) == 9
    assert set(sa.inspect(engine).get_table_names()) >= HISTORY_AND_STATES
