"""A worker's configuration under Airflow: each task may run on another worker, in another
working directory, so a relative project database or state directory would give every task its
own (and incidents would no longer deduplicate). Inside an Airflow task they are refused, with
the fix; elsewhere relative defaults stay as they are."""

from __future__ import annotations

from pathlib import Path

import sqlalchemy as sa

from checkers.project_db import DEFAULT_DATABASE
from scheduling.config import DATABASE_ENV, DEFAULT_STATE_DIR, STATE_DIR_ENV, Config


class WorkerConfigurationError(ValueError):
    """The worker's settings would give each task its own state."""


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


def worker_problems(config: Config, *, database_url: str | None = None) -> list[str]:
    """What would split state between Airflow tasks (empty outside Airflow); `database_url`, when
    given, stands for DQ_DATABASE_URL."""
    if not config.under_airflow:
        return []
    url = database_url or config.database_url
    found = [_database_problem(url), _state_dir_problem(config.state_dir)]
    return [p for p in found if p is not None]


def refuse_relative_paths(config: Config, *, database_url: str | None = None) -> None:
    """Raise WorkerConfigurationError, naming each variable and its fix, inside an Airflow task
    whose project database or state directory is relative."""
    problems = worker_problems(config, database_url=database_url)
    if problems:
        raise WorkerConfigurationError("under Airflow: " + "; ".join(problems))
