"""Today's design for the airflow_tick benchmark: dags/dq_checks.py as of commit 7e75eb4, one
task group per check (a short-circuit gate, then a run task that starts its own Spark driver).

Changed from that commit: the dag_id; start date, end date and catch-up come from DQ_DAG_START,
DQ_DAG_END (ISO times) and DQ_DAG_CATCHUP (true/false), to replay one chosen data interval; and
no `dagrun_timeout` (14 minutes there, which a 60-check tick of this design may exceed: the
benchmark measures the whole tick instead of cutting it)."""

from __future__ import annotations

import datetime as dt
import json
import os
from pathlib import Path

from airflow.sdk import CronDataIntervalTimetable, TaskGroup, dag, get_current_context, task

MANIFEST = Path(os.environ.get("DQ_MANIFEST") or Path(__file__).with_name("dq_checks.json"))
TICK = dt.timedelta(minutes=15)
START = dt.datetime.fromisoformat(os.environ.get("DQ_DAG_START", "2026-01-01T00:00:00+00:00"))
END = dt.datetime.fromisoformat(os.environ["DQ_DAG_END"]) if os.environ.get("DQ_DAG_END") else None
CATCHUP = os.environ.get("DQ_DAG_CATCHUP", "false").lower() in ("1", "true", "yes")


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
    from scheduling.airflow.manifest import clock_from_spec
    from scheduling.windows import is_due

    start, end = _window()
    return is_due(clock_from_spec(clock), start, end)


def _run(check: str) -> dict[str, object]:
    from scheduling.claims import Claim
    from scheduling.runner import run_window

    start, end = _window()
    outcome = run_window([check], start=start, end=end).results[check]
    if isinstance(outcome, Claim):
        raise RuntimeError(outcome.describe())  # a live run holds the window: retry
    print(outcome.summary())
    return {
        "status": outcome.status.value,
        "level": outcome.level.name,
        "failing": outcome.failing,
        "total": outcome.total,
    }


@dag(
    dag_id="dq_checks_one_driver_per_check",
    schedule=CronDataIntervalTimetable("*/15 * * * *", timezone="UTC"),
    start_date=START,
    end_date=END,
    catchup=CATCHUP,
    max_active_runs=1,
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
