"""The one dq-checkers DAG, every 15 minutes. `evaluate` picks the checks due in the run's data
interval and runs them all in one process: one Spark application per tick (none with a
Spark Connect server, DQ_SPARK_REMOTE), one read per source, an ERROR evaluated once more there.
Each check keeps its own task group, one task per kind of outcome: `ok`, `tolerated`, `warning`
(empty: no process) or `critical`, `failed`, `not_run` (red: fails with the outcome's one line);
the others are skipped, so the grid shows each check's level by name. The run's state follows
one leaf, `tick`: the tick ran and every due check was evaluated (a red check does not fail it).

Wiring only. The check list comes from the manifest (DQ_MANIFEST, else dq_checks.json beside this
file) written at deploy time by `dq manifest`; parsing imports neither Spark nor the checks. A
manifest out of date with the check files is no import error: the DAG keeps its checks, and
`evaluate` fails the `manifest` task and alerts the platform's owner. Replays: DQ_DAG_START,
DQ_DAG_END (ISO times, the first and last data interval start) and DQ_DAG_CATCHUP=1."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from airflow.providers.standard.operators.empty import EmptyOperator
from airflow.sdk import (
    Asset,
    CronDataIntervalTimetable,
    ExceptionRetryPolicy,
    RetryAction,
    RetryRule,
    TaskGroup,
    TriggerRule,
    dag,
    get_current_context,
    task,
)
from airflow.sdk.definitions._internal.mixins import DependencyMixin

from scheduling.airflow.manifest import Entry, asset_key, load_manifest, task_ids
from scheduling.config import DagConfig

TICK = dt.timedelta(minutes=15)
# Read when Airflow parses this file, in the DAG processor: no run, no Settings exist yet.
CONFIG = DagConfig.from_environment(default_manifest=Path(__file__).with_name("dq_checks.json"))
ENTRIES = load_manifest(CONFIG.manifest)  # a missing manifest is this file's import error
BY_TASK = {e.task_id: e for e in ENTRIES}
CLOCK = "clock"  # what starts a run: the 15-minute clock, or an upstream asset's key


def _window() -> tuple[dt.datetime, dt.datetime]:
    """The run's data interval; a manual run without a logical date has none, and uses
    (run_after - 15 minutes, run_after]."""
    context = get_current_context()
    start, end = context.get("data_interval_start"), context.get("data_interval_end")
    if start is not None and end is not None:
        return start, end
    after: dt.datetime = context["dag_run"].run_after
    return after - TICK, after


def _evaluate(trigger: str) -> list[str]:
    from scheduling.airflow.tasks import CHOSEN, OUTCOMES, due, due_on_assets, evaluate

    context = get_current_context()
    start, end = _window()
    # the checks due by their clocks, or those run by an event of upstream asset `trigger`
    chosen = due(ENTRIES, start, end) if trigger == CLOCK else due_on_assets(ENTRIES, trigger)
    context["ti"].xcom_push(key=CHOSEN, value=[e.name for e in chosen])
    follow, summaries = evaluate(chosen, start, end, manifest=CONFIG.manifest)
    context["ti"].xcom_push(key=OUTCOMES, value=summaries)
    return follow


def _stale_manifest() -> None:
    from scheduling.airflow.tasks import MANIFEST_CHECK, OUTCOMES, manifest_failure

    ti = get_current_context()["ti"]
    raise manifest_failure(
        (ti.xcom_pull(task_ids="evaluate", key=OUTCOMES) or {}).get(MANIFEST_CHECK)
    )


def _tick() -> str:
    from scheduling.airflow.tasks import CHOSEN, OUTCOMES, tick_done

    ti = get_current_context()["ti"]
    chosen = ti.xcom_pull(task_ids="evaluate", key=CHOSEN)
    return tick_done(chosen, ti.xcom_pull(task_ids="evaluate", key=OUTCOMES))


def _settle(task_id: str) -> dict[str, object]:
    from scheduling.airflow.tasks import OUTCOMES, settle

    entry = BY_TASK[task_id]
    start, end = _window()
    ti = get_current_context()["ti"]
    summaries = ti.xcom_pull(task_ids="evaluate", key=OUTCOMES) or {}
    return settle(entry, summaries.get(entry.name), attempt=ti.try_number, start=start, end=end)


def _publish(task_id: str, outlet_events=None) -> dict[str, object]:
    from scheduling.airflow.tasks import OUTCOMES, publication

    ti = get_current_context()["ti"]
    summary = ti.xcom_pull(task_ids=f"{task_id}.not_run")  # when a retry found it green
    if summary is None:
        summary = (ti.xcom_pull(task_ids="evaluate", key=OUTCOMES) or {}).get(BY_TASK[task_id].name)
    extra = publication(summary)  # skips unless the run made the asset ready
    outlet_events[_guarded(BY_TASK[task_id])].extra = extra
    return extra


def _guarded(entry: Entry) -> Asset:
    assert entry.guards is not None
    return Asset(name=entry.guards["name"], uri=entry.guards["uri"])


#: A red task's outcome is final (the data decides; an ERROR was evaluated twice already);
#: Airflow's retries stay for the rest: a task process lost, a window held by another run.
OUTCOME_DECIDES = ExceptionRetryPolicy(
    rules=[
        RetryRule(
            exception="scheduling.airflow.outcome_tasks.OutcomeFailed",
            action=RetryAction.FAIL,
            reason="the outcome decides",
        )
    ]
)


def _checks(entries: list[Entry], trigger: str) -> None:
    """`evaluate`, then per check the task its outcome settles (OUTCOME_TASKS: an empty one
    when green, without a process; a red one fails with the outcome's one line); for a guarded
    dataset, `ready` emits the Airflow asset event downstream DAGs schedule on, only when the
    run made the asset ready. `manifest` fails when the manifest is stale; `tick`, the only
    leaf, gives the run its state."""
    from scheduling.airflow.outcome_tasks import OUTCOME_TASKS, group_label

    evaluate = task.branch(task_id="evaluate")(_evaluate)(trigger)
    manifest = task(
        task_id="manifest",
        task_display_name="✖ manifest out of date",
        retry_policy=OUTCOME_DECIDES,  # a retry would find the same files
    )(_stale_manifest)()
    tick = task(
        task_id="tick",
        task_display_name="tick: every due check evaluated",
        trigger_rule=TriggerRule.ALL_DONE,
    )(_tick)()
    evaluate >> manifest >> tick
    for entry in entries:
        with TaskGroup(group_id=entry.task_id, group_display_name=group_label(entry.name)):
            shown: list[DependencyMixin] = []
            for task_id, label, green in OUTCOME_TASKS:
                if green:
                    shown.append(EmptyOperator(task_id=task_id, task_display_name=label))
                else:
                    red = task(
                        task_id=task_id, task_display_name=label, retry_policy=OUTCOME_DECIDES
                    )
                    shown.append(red(_settle)(entry.task_id))
            evaluate >> shown
            last: list[DependencyMixin] = shown
            if entry.guards:
                ready = task(
                    task_id="ready",
                    outlets=[_guarded(entry)],
                    trigger_rule=TriggerRule.NONE_FAILED_MIN_ONE_SUCCESS,
                )(_publish)(entry.task_id)
                shown >> ready
                last = [ready]
        last >> tick


DEFAULTS = {
    "retries": CONFIG.retries,
    "retry_delay": CONFIG.retry_delay,
    "execution_timeout": dt.timedelta(minutes=10),
}


@dag(
    dag_id="dq_checks",
    schedule=CronDataIntervalTimetable("*/15 * * * *", timezone="UTC"),
    start_date=CONFIG.start,
    end_date=CONFIG.end,
    catchup=CONFIG.catchup,
    max_active_runs=1,
    dagrun_timeout=dt.timedelta(minutes=14),
    default_args=DEFAULTS,
    tags=["data-quality"],
)
def dq_checks() -> None:
    _checks(ENTRIES, CLOCK)


dq_checks()


def _after_dag(key: str, spec: dict[str, str]) -> None:
    """A DAG per upstream asset: each of its events runs the checks declaring it in `after`
    (besides their clocks). One asset per DAG: a run needs no look at which event started it."""
    ref = Asset.ref(name=spec["name"]) if "name" in spec else Asset.ref(uri=spec["uri"])
    chosen = [e for e in ENTRIES if key in {asset_key(a) for a in e.after}]

    @dag(
        dag_id=f"dq_checks_after_{task_ids([key])[key]}",
        description=f"dq-checkers checks run when {key} is updated",
        schedule=ref,
        start_date=CONFIG.start,
        max_active_runs=1,
        default_args=DEFAULTS,
        tags=["data-quality"],
    )
    def dq_checks_after() -> None:
        _checks(chosen, key)

    dq_checks_after()


for _key, _spec in {asset_key(a): a for e in ENTRIES for a in e.after}.items():
    _after_dag(_key, _spec)
