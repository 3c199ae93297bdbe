"""At most one open incident per fingerprint, enforced by the database (SQLite, PostgreSQL,
MariaDB): the schema migrates on each, migration 3 backfills old duplicates, and two runs that
open the same incident at the same moment end with one incident (the second run's retry
updates it)."""

from __future__ import annotations

import datetime as dt
import threading

import pytest
import sqlalchemy as sa

from alerting.pipeline import handle_outcome, record_outcome
from alerting.policy import EscalationPolicy
from alerting.recording import record_in_transaction
from alerting.store import IncidentStore
from alerting.tables import incidents, runs
from checkers import AlertLevel
from scheduling.schema import MIGRATIONS, migrate, project_database
from tests.alerting.conftest import T0, outcome
from tests.scheduling.databases import KINDS, fresh_database

POLICY = EscalationPolicy(routes={"slack": AlertLevel.WARNING}, repeat_every=dt.timedelta(0))
E = AlertLevel.ERROR


@pytest.fixture(params=KINDS)
def url(request, tmp_path):
    with fresh_database(request.param, tmp_path) as url:
        yield url


def _incidents(engine) -> list[tuple]:
    with engine.connect() as connection:
        rows = connection.execute(
            sa.select(
                incidents.c.id,
                incidents.c.fingerprint,
                incidents.c.status,
                incidents.c.open_fingerprint,
                incidents.c.failing_runs,
            ).order_by(incidents.c.id)
        )
        return [tuple(r) for r in rows]


def test_a_fresh_database_migrates_and_records(url):
    engine = project_database(url)
    try:
        with engine.connect() as connection:
            version = connection.exec_driver_sql("SELECT MAX(version) FROM dq_schema_versions")
            assert version.scalar() == MIGRATIONS[-1][0]
        precise = (T0, T0 + dt.timedelta(minutes=15, microseconds=654321))
        handle_outcome(engine, outcome(E), POLICY, T0, window=precise)
        handle_outcome(engine, outcome(None), POLICY, T0 + dt.timedelta(minutes=15))
        handle_outcome(engine, outcome(E), POLICY, T0 + dt.timedelta(minutes=30))
        [(first, fp, *_), second] = _incidents(engine)
        assert second[1:4] == (fp, "open", fp)
        assert _incidents(engine)[0][2:4] == ("resolved", None)
        with engine.connect() as connection:
            end = connection.execute(sa.select(sa.func.max(runs.c.window_end))).scalar()
        assert end.replace(tzinfo=dt.UTC) == precise[1]  # MariaDB keeps microseconds too
        with pytest.raises(sa.exc.IntegrityError), engine.begin() as connection:
            row = dict(
                connection.execute(sa.select(incidents).where(incidents.c.id == first))
                .mappings()
                .one()
            )
            del row["id"]
            connection.execute(incidents.insert().values(**{**row, "open_fingerprint": fp}))
    finally:
        engine.dispose()


def test_migration_3_closes_older_duplicates_of_an_open_incident(url, monkeypatch):
    engine = sa.create_engine(url)
    try:
        monkeypatch.setattr("scheduling.schema.MIGRATIONS", MIGRATIONS[:2])
        migrate(engine)
        with engine.begin() as connection:  # the schema as version 2 left it
            next(i for i in incidents.indexes if i.name.startswith("ux_")).drop(connection)
            connection.exec_driver_sql("ALTER TABLE dq_incidents DROP COLUMN open_fingerprint")
            if engine.dialect.name in ("mysql", "mariadb"):
                connection.exec_driver_sql("ALTER TABLE dq_runs MODIFY window_end DATETIME NULL")
                connection.exec_driver_sql("ALTER TABLE dq_runs MODIFY outcome TEXT NOT NULL")
        monkeypatch.undo()
        with engine.begin() as connection:
            for fingerprint, status in [
                ("a", "open"),
                ("a", "resolved"),
                ("b", "open"),
                ("a", "open"),
            ]:
                connection.exec_driver_sql(
                    "INSERT INTO dq_incidents (fingerprint, check_name, scope, status, level,"
                    " peak_level, failing_runs, opened_at, updated_at, last_outcome)"
                    f" VALUES ('{fingerprint}', 'c', '', '{status}', 2, 2, 1,"
                    " '2026-11-22 06:00:00', '2026-11-22 06:00:00', '{}')"
                )
        assert migrate(engine) == MIGRATIONS[-1][0]  # 3 and every later migration
        assert [r[1:4] for r in _incidents(engine)] == [
            ("a", "resolved", None),  # superseded by the newer open one
            ("a", "resolved", None),
            ("b", "open", "b"),
            ("a", "open", "a"),
        ]
        if engine.dialect.name in ("mysql", "mariadb"):
            with engine.connect() as connection:
                types = dict(
                    connection.exec_driver_sql(
                        "SELECT column_name, column_type FROM information_schema.columns"
                        " WHERE table_schema = DATABASE() AND table_name = 'dq_runs'"
                    ).all()
                )
            assert (types["window_end"], types["outcome"]) == ("datetime(6)", "longtext")
    finally:
        engine.dispose()


def test_two_runs_opening_one_incident_at_once_make_one_incident(url, monkeypatch):
    """Run A records the first failure and holds its transaction open until run B has looked
    for an open incident (and found none): B's insert is then rejected by the unique open
    fingerprint (PostgreSQL, MariaDB) and its retry updates A's incident. SQLite serializes the
    two transactions whole (BEGIN IMMEDIATE), so B starts after A's commit."""
    engine = project_database(url)
    serialized = engine.dialect.name == "sqlite"
    a_recorded, b_looked = threading.Event(), threading.Event()
    attempts = {"b": 0}
    original = IncidentStore.open_incident

    def load(store, fingerprint):
        found = original(store, fingerprint)
        if threading.current_thread().name == "b" and attempts["b"] == 1:
            b_looked.set()
        return found

    monkeypatch.setattr(IncidentStore, "open_incident", load)

    def run_a(connection):
        recorded = record_outcome(connection, outcome(E), POLICY, T0)
        a_recorded.set()
        assert (b_about_to_begin if serialized else b_looked).wait(30)
        return recorded

    def run_b(connection):
        attempts["b"] += 1
        return record_outcome(connection, outcome(E), POLICY, T0)

    b_about_to_begin = threading.Event()
    results: dict[str, object] = {}

    def b() -> None:
        a_recorded.wait(30)
        b_about_to_begin.set()
        results["b"] = record_in_transaction(engine, run_b)

    thread = threading.Thread(target=b, name="b")
    thread.start()
    try:
        results["a"] = record_in_transaction(engine, run_a)
    finally:
        thread.join(60)
    try:
        [(_, fp, status, open_fp, failing_runs)] = _incidents(engine)
        assert (status, open_fp, failing_runs) == ("open", fp, 2)
        assert attempts["b"] == (1 if serialized else 2)  # the retry, where the race happens
        with engine.connect() as connection:
            assert connection.execute(sa.select(sa.func.count()).select_from(runs)).scalar() == 2
    finally:
        engine.dispose()
