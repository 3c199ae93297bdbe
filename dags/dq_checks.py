"""The one dq-checkers DAG, every 15 minutes. `evaluate` picks the checks due in the run's data
interval and runs them all in one process: one Spark application per tick (none with a
Spark Connect server, DQ_SPARK_REMOTE), one read per source. Each check keeps its own task group,
whose `result` task takes the check's state: failed (no retry) for a FAILED outcome at or above
its level, failed with retries for an ERROR outcome (a retry evaluates it again), success
otherwise, skipped when the check is not due.

Wiring only. The check list comes from the manifest (DQ_MANIFEST, else dq_checks.json beside this
file) written at deploy time by `dq manifest`; parsing hashes the check packages' files to refuse
a stale manifest, and imports neither Spark nor the checks. Replays: DQ_DAG_START, DQ_DAG_END
(ISO times, the first and last data interval start) and DQ_DAG_CATCHUP=1."""

from __future__ import annotations

import datetime as dt
import os

from airflow.sdk import CronDataIntervalTimetable, TaskGroup, dag, get_current_context, task

from scheduling.manifest import load_manifest

TICK = dt.timedelta(minutes=15)
ENTRIES = load_manifest()  # a missing or stale manifest is this file's import error
BY_TASK = {e.task_id: e for e in ENTRIES}


def _moment(name: str, default: dt.datetime | None) -> dt.datetime | None:
    text = os.environ.get(name)
    if not text:
        return default
    moment = dt.datetime.fromisoformat(text)
    return moment if moment.tzinfo else moment.replace(tzinfo=dt.UTC)


def _window() -> tuple[dt.datetime, dt.datetime]:
    """The run's data interval; a manual run without a logical date has none, and uses
    (run_after - 15 minutes, run_after]."""
    context = get_current_context()
    start, end = context.get("data_interval_start"), context.get("data_interval_end")
    if start is not None and end is not None:
        return start, end
    after: dt.datetime = context["dag_run"].run_after
    return after - TICK, after


def _evaluate() -> list[str]:
    from scheduling.airflow_tasks import OUTCOMES, evaluate

    follow, summaries = evaluate(ENTRIES, *_window())
    get_current_context()["ti"].xcom_push(key=OUTCOMES, value=summaries)
    return follow


def _result(task_id: str) -> dict[str, object]:
    from scheduling.airflow_tasks import OUTCOMES, settle

    entry = BY_TASK[task_id]
    start, end = _window()
    ti = get_current_context()["ti"]
    summaries = ti.xcom_pull(task_ids="evaluate", key=OUTCOMES) or {}
    return settle(entry, summaries.get(entry.name), attempt=ti.try_number, start=start, end=end)


@dag(
    dag_id="dq_checks",
    schedule=CronDataIntervalTimetable("*/15 * * * *", timezone="UTC"),
    start_date=_moment("DQ_DAG_START", dt.datetime(2026, 1, 1, tzinfo=dt.UTC)),
    end_date=_moment("DQ_DAG_END", None),
    catchup=os.environ.get("DQ_DAG_CATCHUP", "0").lower() in ("1", "true"),
    max_active_runs=1,
    dagrun_timeout=dt.timedelta(minutes=14),
    default_args={
        "retries": int(os.environ.get("DQ_TASK_RETRIES", "1")),
        "retry_delay": dt.timedelta(seconds=float(os.environ.get("DQ_TASK_RETRY_DELAY_S", "120"))),
        "execution_timeout": dt.timedelta(minutes=10),
    },
    tags=["data-quality"],
)
def dq_checks() -> None:
    evaluate = task.branch(task_id="evaluate")(_evaluate)()
    for entry in ENTRIES:
        with TaskGroup(group_id=entry.task_id):
            evaluate >> task(task_id="result")(_result)(entry.task_id)


dq_checks()
