"""The project database's composed schema: one registry over every package's tables, and the
metric history and engine states brought under migration 9 (created on a fresh database; a
database that had them keeps them: tests/upgrade), triage's tables and columns by migration 10,
grouping's columns by 11, where metric history's values came from by 12, the installation id by
13, the schemas schema checks saw at their previous run by 14."""

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
    "dq_incident_events",
    "dq_metric_annotations",
    "dq_known_broken_keys",
    "dq_metric_periods",
    "dq_installation",
    "dq_schemas",
}
#: Keys longer than MariaDB allows (3,072 bytes in utf8mb4): not created there.
HISTORY_AND_STATES = {"dq_metrics", "dq_states"}


def test_the_registry_numbers_every_version_once():
    assert [version for version, _ in MIGRATIONS] == list(range(1, 15))


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
                assert sorted(versions.scalars()) == list(range(1, 15))
        finally:
            engine.dispose()


def test_migration_9_creates_history_and_states_a_database_never_had(tmp_path, monkeypatch):
    from scheduling.schema import migrate

    engine = sa.create_engine(f"sqlite:///{tmp_path / 'dq.db'}")
    monkeypatch.setattr("scheduling.schema.MIGRATIONS", MIGRATIONS[:8])
    assert migrate(engine) == 8
    assert not HISTORY_AND_STATES & set(sa.inspect(engine).get_table_names())
    monkeypatch.undo()
    assert migrate(engine) == 14
    assert set(sa.inspect(engine).get_table_names()) >= HISTORY_AND_STATES


def test_migration_10_adds_triage_to_a_version_9_database_keeping_its_incidents(
    tmp_path, monkeypatch
):
    from scheduling.schema import migrate

    engine = sa.create_engine(f"sqlite:///{tmp_path / 'dq.db'}")
    monkeypatch.setattr("scheduling.schema.MIGRATIONS", MIGRATIONS[:9])
    assert migrate(engine) == 9
    with engine.begin() as connection:
        connection.exec_driver_sql(
            "INSERT INTO dq_incidents (fingerprint, check_name, scope, status, level, peak_level,"
            " failing_runs, opened_at, updated_at, last_outcome) VALUES"
            " ('f', 'c', '', 'open', 2, 2, 1, '2026-01-01', '2026-01-01', '{}')"
        )
        connection.exec_driver_sql(
            "INSERT INTO dq_mutes (check_pattern, starts_at, ends_at, comment, created_by)"
            " VALUES ('c*', '2026-01-01', '2026-01-02', 'why', 'ana')"
        )
    monkeypatch.undo()
    assert migrate(engine) == 14
    inspector = sa.inspect(engine)
    assert {"acknowledged_by_name", "acknowledged_level", "resolved_as"} <= {
        c["name"] for c in inspector.get_columns("dq_incidents")
    }
    assert "fingerprint" in {c["name"] for c in inspector.get_columns("dq_mutes")}
    assert {"dq_incident_events", "dq_metric_annotations", "dq_known_broken_keys"} <= set(
        inspector.get_table_names()
    )
    with engine.connect() as connection:
        kept = connection.exec_driver_sql(
            "SELECT i.check_name, i.acknowledged_at, m.fingerprint FROM dq_incidents i, dq_mutes m"
        ).one()
    assert tuple(kept) == ("c", None, None)


def test_migration_12_adds_the_metric_source_to_a_version_11_history_keeping_its_rows(
    tmp_path, monkeypatch
):
    from scheduling.schema import migrate

    engine = sa.create_engine(f"sqlite:///{tmp_path / 'dq.db'}")
    monkeypatch.setattr("scheduling.schema.MIGRATIONS", MIGRATIONS[:11])
    assert migrate(engine) == 11
    with engine.begin() as connection:  # as an earlier release created it (9 creates it as now)
        connection.exec_driver_sql("ALTER TABLE dq_metrics DROP COLUMN source")
        connection.exec_driver_sql(
            "INSERT INTO dq_metrics (source_table, dataset_time, entity, instance, name,"
            " analyzer, value, tags) VALUES ('t', '2026-01-01', 'Dataset', '*', 'Size', 'k', 3,"
            " '{}')"
        )
    monkeypatch.undo()
    assert migrate(engine) == 14
    with engine.connect() as connection:
        kept = connection.exec_driver_sql("SELECT value, source FROM dq_metrics").one()
    assert tuple(kept) == (3.0, None)  # recorded before sources were kept
