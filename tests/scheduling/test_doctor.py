"""`dq doctor` on a worker: green on a healthy local setup, red with the reason for an
unreachable database and for an unmigrated, old or newer schema. (Executors that cannot import a
module: tests/deployment, on a real Spark Connect server.)"""

from __future__ import annotations

import socket

import pytest
import sqlalchemy as sa

from checkers.project_db import schema_versions, utc_now
from scheduling.cli import main
from scheduling.cli.doctor import database_finding
from scheduling.cli.exits import EXIT_ERROR, EXIT_INFRA, EXIT_OK
from scheduling.schema import MIGRATIONS, project_database
from tests.scheduling.databases import KINDS, fresh_database

CURRENT = max(version for version, _ in MIGRATIONS)


@pytest.fixture
def worker_env(tmp_path, monkeypatch):
    monkeypatch.setenv("DQ_CHECKS", "tests.scheduling.cli_fixture_checks")
    monkeypatch.setenv("DQ_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("DQ_CONFIG", str(tmp_path / "none.toml"))
    return tmp_path


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])  # nothing listens once it is closed


def test_doctor_is_green_on_a_healthy_local_setup(spark, worker_env, monkeypatch, capsys):
    url = f"sqlite:///{worker_env / 'dq.db'}"
    project_database(url).dispose()
    monkeypatch.setenv("DQ_DATABASE_URL", url)
    manifest = worker_env / "dq_checks.json"
    monkeypatch.setenv("DQ_MANIFEST", str(manifest))
    assert main(["manifest"]) == EXIT_OK
    capsys.readouterr()
    assert main(["doctor"]) == EXIT_OK
    lines = capsys.readouterr().out.splitlines()
    assert [line.split(":")[0] for line in lines] == [
        "OK   worker",
        "OK   database",
        "OK   files",
        "OK   checks",
        "OK   manifest",
        "OK   spark",
        "OK   executors",
    ]
    assert f"schema version {CURRENT} (current)" in lines[1]
    assert "3 check(s) from tests.scheduling.cli_fixture_checks" in lines[3]
    assert "runs Python predicates and imports tests.scheduling.cli_fixture_checks" in lines[6]
    manifest.write_text('{"version": 1, "checks": []}')  # an old deploy's manifest
    assert main(["doctor"]) == EXIT_ERROR
    out = capsys.readouterr().out
    assert "FAIL manifest: " in out and f"fix: dq manifest --out {manifest} at deploy" in out


def test_doctor_is_red_for_an_unreachable_database(spark, worker_env, monkeypatch, capsys):
    port = _closed_port()
    monkeypatch.setenv("DQ_DATABASE_URL", f"postgresql+psycopg://dq:secret@127.0.0.1:{port}/dq")
    assert main(["doctor"]) == EXIT_INFRA
    out = capsys.readouterr().out
    [line] = [line for line in out.splitlines() if line.startswith("FAIL")]
    assert line.startswith(
        f"FAIL database: unreachable: postgresql+psycopg://dq:***@127.0.0.1:{port}"
    )
    assert "OperationalError" in line and "secret" not in out
    assert "fix: check DQ_DATABASE_URL" in out
    assert "OK   spark" in out  # the other findings still ran


@pytest.mark.parametrize("kind", KINDS)
def test_the_database_finding_reads_the_schema_version_without_migrating(kind, tmp_path) -> None:
    with fresh_database(kind, tmp_path) as url:
        if kind == "sqlite":  # an empty file: a database nothing migrated
            sa.create_engine(url).connect().close()
        unmigrated = database_finding(url)
        assert not unmigrated.ok
        assert f"schema version 0, this dq-checkers needs {CURRENT}" in unmigrated.detail
        assert "`dq history`" in unmigrated.fix
        engine = project_database(url)
        assert database_finding(url).ok
        with engine.begin() as connection:
            connection.execute(schema_versions.delete().where(schema_versions.c.version == CURRENT))
        old = database_finding(url)
        assert f"schema version {CURRENT - 1}, this dq-checkers needs {CURRENT}" in old.detail
        with engine.begin() as connection:
            row = {"version": CURRENT + 1, "applied_at": utc_now()}
            connection.execute(schema_versions.insert().values(**row))
        newer = database_finding(url)
        assert f"newer than this dq-checkers ({CURRENT})" in newer.detail
        assert newer.fix == "upgrade dq-checkers on this worker"
        engine.dispose()


def test_a_missing_sqlite_file_is_not_created(tmp_path) -> None:
    finding = database_finding(f"sqlite:///{tmp_path / 'nowhere.db'}")
    assert not finding.ok and "no such file" in finding.detail
    assert not (tmp_path / "nowhere.db").exists()


def test_doctor_is_red_for_a_connect_server_that_does_not_answer(worker_env, monkeypatch, capsys):
    url = f"sqlite:///{worker_env / 'dq.db'}"
    project_database(url).dispose()
    monkeypatch.setenv("DQ_DATABASE_URL", url)
    port = _closed_port()
    monkeypatch.setenv("DQ_SPARK_REMOTE", f"sc://127.0.0.1:{port}")
    assert main(["doctor"]) == EXIT_ERROR
    out = capsys.readouterr().out
    assert f"FAIL spark: no Spark Connect server answers at 127.0.0.1:{port}" in out
    assert "fix: check DQ_SPARK_REMOTE / DQ_SPARK_MASTER" in out
    assert "executors" not in out  # nothing to ask without Spark


def test_a_broken_check_module_is_blamed_not_the_executors_python(
    spark, worker_env, monkeypatch, capsys
):
    """A module that fails to import everywhere is the checks finding's; the executors, which
    import every other module with the same Python, stay green."""
    monkeypatch.setenv("DQ_CHECKS", "tests.checks.broken_checks")
    monkeypatch.setenv("DQ_DATABASE_URL", f"sqlite:///{worker_env / 'dq.db'}")
    main(["doctor"])
    lines = {line.split(":")[0]: line for line in capsys.readouterr().out.splitlines()}
    assert lines["FAIL checks"]
    executors = lines["OK   executors"]
    assert "tests.checks.broken_checks.definitions" in executors
    assert "fail here too: see checks" in executors
