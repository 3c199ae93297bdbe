"""The one dq-checkers DAG, every 15 minutes. `evaluate` picks the checks due in the run's data
interval and runs them all in one process: one Spark application per tick (none with a
Spark Connect server, DQ_SPARK_REMOTE), one read per source, an ERROR evaluated once more there.
Every outcome but PASSED is then one instance of the mapped `outcome` task, named in the grid by
its kind and check (`✖ CRITICAL · orders_daily`, `⚠ warning · ...`, `≈ tolerated · ...`,
`✖ FAILED · ...`, `✖ could not run · ...`, `✖ manifest out of date`): green ones succeed, red
ones fail with the outcome's one line. A passed check has no task instance (evaluate's log and
XCom list it), so a tick has `evaluate`, `tick` and one instance per check that did not pass,
however many checks are deployed. The run's state follows one leaf, `tick`: the tick ran and
every due check was evaluated (a red check does not fail it). A guarded dataset made ready emits
its Airflow asset event through the alias READY (evaluate's, or a retried outcome's).

Wiring only. The check list comes from the manifest (DQ_MANIFEST, else dq_checks.json beside this
file) written at deploy time by `dq manifest`; parsing imports neither Spark nor the checks. A
manifest out of date with the check files is no import error: the DAG keeps its checks, and
`evaluate` alerts the platform's owner and shows a failed `outcome` instance. Replays:
DQ_DAG_START, DQ_DAG_END (ISO times, the first and last data interval start) and
DQ_DAG_CATCHUP=1."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from airflow.sdk import (
    Asset,
    AssetAlias,
    CronDataIntervalTimetable,
    ExceptionRetryPolicy,
    RetryAction,
    RetryRule,
    TriggerRule,
    dag,
    get_current_context,
    task,
)

from scheduling.airflow.manifest import Entry, asset_key, load_manifest, task_ids
from scheduling.config import DagConfig

TICK = dt.timedelta(minutes=15)
# Read when Airflow parses this file, in the DAG processor: no run, no Settings exist yet.
CONFIG = DagConfig.from_environment(default_manifest=Path(__file__).with_name("dq_checks.json"))
ENTRIES = load_manifest(CONFIG.manifest)  # a missing manifest is this file's import error
BY_NAME = {e.name: e for e in ENTRIES}
CLOCK = "clock"  # what starts a run: the 15-minute clock, or an upstream asset's key
#: The alias a guarded dataset's asset event is emitted through, when the run made it ready.
READY = AssetAlias(name="dq_checks_ready")


def _window() -> tuple[dt.datetime, dt.datetime]:
    """The run's data interval; a manual run without a logical date has none, and uses
    (run_after - 15 minutes, run_after]."""
    context = get_current_context()
    start, end = context.get("data_interval_start"), context.get("data_interval_end")
    if start is not None and end is not None:
        return start, end
    after: dt.datetime = context["dag_run"].run_after
    return after - TICK, after


def _evaluate(trigger: str, outlet_events=None) -> list[dict[str, str]]:
    from scheduling.airflow.tasks import CHOSEN, OUTCOMES, due, due_on_assets, evaluate

    context = get_current_context()
    start, end = _window()
    # the checks due by their clocks, or those run by an event of upstream asset `trigger`
    chosen = due(ENTRIES, start, end) if trigger == CLOCK else due_on_assets(ENTRIES, trigger)
    context["ti"].xcom_push(key=CHOSEN, value=[e.name for e in chosen])
    shown, summaries = evaluate(chosen, start, end, manifest=CONFIG.manifest)
    context["ti"].xcom_push(key=OUTCOMES, value=summaries)
    for entry in chosen:
        _publish(entry, summaries.get(entry.name), outlet_events)
    return shown  # what `outcome` maps over: one instance per check that did not pass


def _tick() -> str:
    from scheduling.airflow.tasks import CHOSEN, OUTCOMES, tick_done

    ti = get_current_context()["ti"]
    chosen = ti.xcom_pull(task_ids="evaluate", key=CHOSEN)
    return tick_done(chosen, ti.xcom_pull(task_ids="evaluate", key=OUTCOMES))


def _outcome(shown: dict[str, str], outlet_events=None) -> dict[str, object]:
    from scheduling.airflow.tasks import MANIFEST_CHECK, OUTCOMES, manifest_failure, settle

    ti = get_current_context()["ti"]
    summaries = ti.xcom_pull(task_ids="evaluate", key=OUTCOMES, map_indexes=-1) or {}
    if shown["check"] == MANIFEST_CHECK:
        raise manifest_failure(summaries.get(MANIFEST_CHECK))
    entry = BY_NAME[shown["check"]]
    start, end = _window()
    summary = settle(entry, summaries.get(entry.name), attempt=ti.try_number, start=start, end=end)
    _publish(entry, summary, outlet_events)  # a retry that found the check green
    return summary


def _publish(entry: Entry, summary: dict[str, object] | None, outlet_events) -> None:
    """The guarded dataset's asset event, through READY, when the run made it ready."""
    from scheduling.airflow.tasks import readiness_event

    extra = readiness_event(summary) if entry.guards else None
    if extra is not None:
        outlet_events[READY].add(_guarded(entry), extra=extra)


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


def _checks(trigger: str) -> None:
    """`evaluate`, then the mapped `outcome` task over what it shows (every outcome but PASSED,
    named by kind and check: green ones succeed, red ones fail with the outcome's one line);
    `tick`, the only leaf, gives the run its state."""
    evaluate = task(task_id="evaluate", outlets=[READY])(_evaluate)(trigger)
    outcome = task(
        task_id="outcome",  # (a mapped task's instances show the task id, not a display name)
        map_index_template="{{ task.op_kwargs['shown']['label'] }}",
        retry_policy=OUTCOME_DECIDES,
        outlets=[READY],
    )(_outcome).expand(shown=evaluate)
    tick = task(
        task_id="tick",
        task_display_name="tick: every due check evaluated",
        trigger_rule=TriggerRule.ALL_DONE,
    )(_tick)()
    outcome >> tick


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
    _checks(CLOCK)


dq_checks()


def _after_dag(key: str, spec: dict[str, str]) -> None:
    """A DAG per upstream asset: each of its events runs the checks declaring it in `after`
    (besides their clocks). One asset per DAG: a run needs no look at which event started it."""
    ref = Asset.ref(name=spec["name"]) if "name" in spec else Asset.ref(uri=spec["uri"])

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
        _checks(key)

    dq_checks_after()


for _key, _spec in {asset_key(a): a for e in ENTRIES for a in e.after}.items():
    _after_dag(_key, _spec)
