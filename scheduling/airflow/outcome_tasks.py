"""The tasks of a check's group in the DAG, one per kind of outcome, as the grid names them, and
the exception that fails a red one; imported when Airflow parses the DAG (its retry policy
imports the exception), so it imports nothing (no Spark, no checks)."""

from __future__ import annotations

#: A check group's tasks, one per kind of outcome: (task id, display name, green). Green ones
#: are empty (no process); a red one runs `settle`, which fails it with the one-line summary.
OUTCOME_TASKS: tuple[tuple[str, str, bool], ...] = (
    ("ok", "✓ passed", True),
    ("tolerated", "≈ tolerated", True),
    ("warning", "⚠ warning", True),
    ("critical", "✖ CRITICAL", False),
    ("failed", "✖ FAILED", False),
    ("not_run", "✖ could not run", False),
)
#: The red task retried by Airflow on an infrastructure failure (it evaluates the check again).
NOT_RUN = "not_run"


def group_label(name: str) -> str:
    """A check's group as the grid shows it, its distinguishing part first: the grid cuts
    names at about 22 characters, so `module:teams.orders.daily` reads `daily (module:teams.
    orders)`; a plain check name stays as it is."""
    head, sep, tail = name.rpartition(".")
    if not sep:
        head, sep, tail = name.rpartition(":")
    return f"{tail} ({head})" if sep and tail else name


class OutcomeFailed(SystemExit):
    """A red outcome fails its task with the outcome's one line as the failure message. A
    SystemExit, because Airflow logs any other exception with its traceback, which says nothing
    about the data; the task's retry policy fails it without retry (the outcome decides)."""
