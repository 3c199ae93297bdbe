"""Under Airflow, a relative project database or state directory is refused, naming the variable
and the fix; outside Airflow nothing changes."""

from __future__ import annotations

import pytest

from scheduling.airflow.worker_config import WorkerConfigurationError
from scheduling.airflow.worker_config import worker_problems as _worker_problems
from scheduling.config import AIRFLOW_TASK_ENV, Config
from scheduling.settings import Settings

TASK = {AIRFLOW_TASK_ENV: "dq_checks"}  # what Airflow's task runner exports to every task
SHARED = {"DQ_DATABASE_URL": "postgresql+psycopg://dq@db.internal/dq", "DQ_STATE_DIR": "/srv/dq"}


def worker_problems(environ: dict[str, str]) -> list[str]:
    return _worker_problems(Config.from_environment(environ))


def test_outside_airflow_relative_defaults_stay() -> None:
    assert not Config.from_environment({}).under_airflow
    assert worker_problems({}) == []
    assert worker_problems({"DQ_DATABASE_URL": "sqlite:///dq.db", "DQ_STATE_DIR": "x"}) == []


@pytest.mark.parametrize(
    ("url", "named"),
    [
        (None, "DQ_DATABASE_URL is not set"),
        ("sqlite:///.dq/dq.db", "the relative SQLite path '.dq/dq.db'"),
        ("sqlite:///dq.db", "the relative SQLite path 'dq.db'"),
        ("sqlite://", "an in-memory SQLite database"),
    ],
)
def test_a_database_per_task_is_refused_under_airflow(url, named) -> None:
    env = {**TASK, "DQ_STATE_DIR": "/srv/dq"} | ({"DQ_DATABASE_URL": url} if url else {})
    [problem] = worker_problems(env)
    assert named in problem
    assert "postgresql+psycopg://" in problem  # the fix


@pytest.mark.parametrize("directory", [None, ".dq", "state/dq"])
def test_a_relative_state_directory_is_refused_under_airflow(directory) -> None:
    env = {**TASK, "DQ_DATABASE_URL": "sqlite:////srv/dq/dq.db"}
    if directory:
        env["DQ_STATE_DIR"] = directory
    [problem] = worker_problems(env)
    assert problem.startswith("DQ_STATE_DIR ") and "absolute directory" in problem


def test_shared_locations_pass_under_airflow() -> None:
    assert worker_problems({**TASK, **SHARED}) == []
    absolute_sqlite = {**TASK, **SHARED, "DQ_DATABASE_URL": "sqlite:////srv/dq/dq.db"}
    assert worker_problems(absolute_sqlite) == []


def test_settings_refuse_the_defaults_inside_an_airflow_task(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("DQ_DATABASE_URL", raising=False)
    monkeypatch.delenv("DQ_STATE_DIR", raising=False)
    monkeypatch.setenv(AIRFLOW_TASK_ENV, "dq_checks")
    with pytest.raises(WorkerConfigurationError) as refused:
        Settings.from_environment()
    assert "DQ_DATABASE_URL is not set" in str(refused.value)
    assert "DQ_STATE_DIR is not set" in str(refused.value)
    assert not (tmp_path / ".dq").exists()  # refused before anything was created
    monkeypatch.setenv("DQ_STATE_DIR", str(tmp_path / "state"))
    url = f"sqlite:///{tmp_path / 'dq.db'}"
    assert Settings.from_environment(database_url=url).database_error is None
