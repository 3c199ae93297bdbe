"""A worker's configuration under Airflow: each task may run on another worker, in another
working directory, so a relative project database or state directory would give every task its
own (and incidents would no longer deduplicate). Inside an Airflow task they are refused, with
the fix; elsewhere relative defaults stay as they are."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

import sqlalchemy as sa

from checkers.project_db import DATABASE_ENV, DEFAULT_DATABASE

STATE_DIR_ENV = "DQ_STATE_DIR"
DEFAULT_STATE_DIR = ".dq"
#: Set by Airflow's task runner (Task SDK) in the environment of every task it executes, and
#: inherited by the processes a task starts (`dq run` from a BashOperator).
AIRFLOW_TASK_ENV = "AIRFLOW_CTX_DAG_ID"


class WorkerConfigurationError(ValueError):
    """The worker's settings would give each task its own state."""


def under_airflow(environ: Mapping[str, str] | None = None) -> bool:
    """Whether this process is (or was started by) an Airflow task."""
    env = os.environ if environ is None else environ
    return bool(env.get(AIRFLOW_TASK_ENV))


def _database_problem(url: str | None) -> str | None:
    if not url:
        return (
            f"{DATABASE_ENV} is not set, so each worker would use its own SQLite file "
            f"{DEFAULT_DATABASE} under the task's working directory: set {DATABASE_ENV} to the "
            "shared project database (postgresql+psycopg://user@host/dq) on every worker"
        )
    parsed = sa.engine.make_url(url)
    if parsed.get_backend_name() != "sqlite":
        return None
    path = parsed.database or ""
    if path and path != ":memory:" and Path(path).is_absolute():
        return None
    where = f"the relative SQLite path {path!r}" if path else "an in-memory SQLite database"
    return (
        f"{DATABASE_ENV} names {where}, which differs from task to task: set it to the shared "
        "project database (postgresql+psycopg://user@host/dq), or to an absolute SQLite path "
        "every task shares (sqlite:////srv/dq/dq.db, one machine only)"
    )


def _state_dir_problem(directory: str | None) -> str | None:
    if directory and Path(directory).is_absolute():
        return None
    given = f"is {directory!r}" if directory else f"is not set (default {DEFAULT_STATE_DIR!r})"
    return (
        f"{STATE_DIR_ENV} {given}, relative to each task's working directory: set it to an "
        "absolute directory on the worker (it holds the spool, the alert log and failing rows)"
    )


def worker_problems(
    environ: Mapping[str, str] | None = None, *, database_url: str | None = None
) -> list[str]:
    """What would split state between Airflow tasks (empty outside Airflow); `database_url`, when
    given, stands for DQ_DATABASE_URL."""
    env = os.environ if environ is None else environ
    if not under_airflow(env):
        return []
    url = database_url or env.get(DATABASE_ENV)
    found = [_database_problem(url), _state_dir_problem(env.get(STATE_DIR_ENV))]
    return [p for p in found if p is not None]


def refuse_relative_paths(
    environ: Mapping[str, str] | None = None, *, database_url: str | None = None
) -> None:
    """Raise WorkerConfigurationError, naming each variable and its fix, inside an Airflow task
    whose project database or state directory is relative."""
    problems = worker_problems(environ, database_url=database_url)
    if problems:
        raise WorkerConfigurationError("under Airflow: " + "; ".join(problems))
