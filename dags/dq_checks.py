"""The one dq-checkers DAG: every 15 minutes, per check a task group whose gate skips the check
unless its clock fires in the run's data interval, then the run task. Wiring only: the check list
comes from the manifest next to this file (`dq manifest` writes it), so parsing imports neither
Spark nor the checks, and touches no database or network."""

from __future__ import annotations

import datetime as dt
import json
import os
from pathlib import Path

from airflow.sdk import CronDataIntervalTimetable, TaskGroup, dag, get_current_context, task

MANIFEST = Path(os.environ.get("DQ_MANIFEST") or Path(__file__).with_name("dq_checks.json"))
TICK = dt.timedelta(minutes=15)


def _window() -> tuple[dt.datetime, dt.datetime]:
    """The run's data interval; a manual run without a logical date has none, and uses
    (run_after - 15 minutes, run_after]."""
    context = get_current_context()
    start, end = context.get("data_interval_start"), context.get("data_interval_end")
    if start is not None and end is not None:
        return start, end
    after: dt.datetime = context["dag_run"].run_after
    return after - TICK, after


def _is_due(clock: dict | None) -> bool:
    from scheduling.manifest import clock_from_spec
    from scheduling.windows import is_due

    start, end = _window()
    return is_due(clock_from_spec(clock), start, end)


def _run(check: str) -> dict[str, object]:
    from scheduling.runner import run_named

    start, end = _window()
    outcome = run_named([check], start=start, end=end)[0]
    print(outcome.summary())
    return {
        "status": outcome.status.value,
        "level": outcome.level.name,
        "failing": outcome.failing,
        "total": outcome.total,
    }


@dag(
    dag_id="dq_checks",
    schedule=CronDataIntervalTimetable("*/15 * * * *", timezone="UTC"),
    start_date=dt.datetime(2026, 1, 1, tzinfo=dt.UTC),
    catchup=False,
    max_active_runs=1,
    dagrun_timeout=dt.timedelta(minutes=14),
    default_args={
        "retries": 1,
        "retry_delay": dt.timedelta(minutes=2),
        "execution_timeout": dt.timedelta(minutes=10),
    },
    tags=["data-quality"],
)
def dq_checks() -> None:
    for entry in json.loads(MANIFEST.read_text())["checks"]:
        with TaskGroup(group_id=entry["name"]):
            gate = task.short_circuit(task_id="due", ignore_downstream_trigger_rules=False)(
                _is_due
            )(entry["clock"])
            gate >> task(task_id="run")(_run)(entry["name"])


dq_checks()
