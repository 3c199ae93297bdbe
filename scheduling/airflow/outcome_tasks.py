"""How the DAG's grid shows an outcome, and the exception that fails a red one; imported when
Airflow parses the DAG (its retry policy imports the exception), so it imports nothing (no Spark,
no checks).

A passed check has no task of its own (`evaluate`'s log and XCom list it); every other outcome is
one instance of the mapped `outcome` task, named (its map index) by the outcome's kind and the
check: `✖ CRITICAL · every_quarter_positive`. Task instances per tick: `evaluate`, `tick` and one
per check that did not pass (at least one, skipped when all passed), whatever the number of
checks deployed."""

from __future__ import annotations

#: The kinds of outcome, as the grid names them (the mark before the check's name): green ones
#: succeed, red ones fail with the outcome's one line.
KINDS: dict[str, str] = {
    "ok": "✓ passed",
    "tolerated": "≈ tolerated",
    "warning": "⚠ warning",
    "critical": "✖ CRITICAL",
    "failed": "✖ FAILED",
    "not_run": "✖ could not run",
}
#: A passed check's kind: no task instance (no process) of its own.
PASSED = "ok"
#: The red kind retried by Airflow on an infrastructure failure (it evaluates the check again).
NOT_RUN = "not_run"
#: The outcome instance of a stale manifest (the pseudo-check `dq_manifest`'s ERROR).
STALE_MANIFEST = "✖ manifest out of date"


def group_label(name: str) -> str:
    """A check's name as the grid shows it, its distinguishing part first: the grid cuts names
    at about 22 characters, so `module:teams.orders.daily` reads `daily (module:teams.orders)`;
    a plain check name stays as it is."""
    head, sep, tail = name.rpartition(".")
    if not sep:
        head, sep, tail = name.rpartition(":")
    return f"{tail} ({head})" if sep and tail else name


def outcome_label(kind: str, name: str) -> str:
    """The `outcome` instance's name in the grid (its rendered map index): kind, then check."""
    return f"{KINDS[kind]} · {group_label(name)}"


class OutcomeFailed(SystemExit):
    """A red outcome fails its task with the outcome's one line as the failure message. A
    SystemExit, because Airflow logs any other exception with its traceback, which says nothing
    about the data; the task's retry policy fails it without retry (the outcome decides)."""
