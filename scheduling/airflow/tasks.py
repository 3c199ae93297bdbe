"""What the DAG's tasks do, apart from Airflow: `evaluate` picks the checks due in the run's
window and runs them all in one process (one Spark application per tick, one read per source, one
engine pass per dataset), and `settle` turns one check's outcome into its task's state.
Airflow is imported only for its exceptions, when a task must fail."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence

from checkers.outcome import CheckOutcome
from checks.task_states import TaskStates, TaskVerdict
from scheduling.airflow.manifest import Entry, asset_key, clock_from_spec
from scheduling.claims import Claim
from scheduling.config import Config
from scheduling.tick.readiness import Readiness
from scheduling.windows import is_due

OUTCOMES = "outcomes"  # the XCom key of the summaries evaluate pushes
HELD = "held"  # the status of a window another live run is evaluating

Summary = dict[str, object]


def result_task(entry: Entry) -> str:
    return f"{entry.task_id}.result"


def ok_task(entry: Entry) -> str:
    """The check's green path: an empty task the scheduler marks success without a process."""
    return f"{entry.task_id}.ok"


def states_of(entry: Entry, defaults: TaskStates) -> TaskStates:
    """The check's own task states, else `defaults` (DQ_TASK_FAILS_AT, DQ_TASK_FAILS_ON_ERROR)."""
    return TaskStates.from_spec(entry.task_states) if entry.task_states else defaults


def green(entry: Entry, summary: Summary, defaults: TaskStates) -> bool:
    """Whether the outcome leaves the check's task green (so it needs no task process)."""
    if summary["status"] == HELD or summary.get("readiness_error"):
        return False
    verdict = states_of(entry, defaults).verdict(str(summary["status"]), str(summary["level"]))
    return verdict is TaskVerdict.SUCCEED


def due(entries: Sequence[Entry], start: dt.datetime, end: dt.datetime) -> list[Entry]:
    """The entries due in (start, end]: those whose clock fires, and every check that could not
    be defined (its ERROR outcome shows each tick, until it is fixed)."""
    return [
        e
        for e in entries
        if e.problem is not None or (e.clock and is_due(clock_from_spec(e.clock), start, end))
    ]


def summary_of(result: CheckOutcome | Claim, readiness: Readiness | None = None) -> Summary:
    """An outcome (or a claim held elsewhere) as the JSON a task pushes to XCom, with what the
    run did to the readiness of the asset the check guards."""
    if isinstance(result, Claim):
        return {"check": result.check, "status": HELD, "summary": result.describe()}
    gate: Summary = {}
    if readiness is not None:
        gate = {
            "ready": readiness.ready and readiness.error is None,
            "readiness": readiness.describe(),
            "readiness_error": readiness.error,
            "marker": readiness.content,
        }
    return {
        **gate,
        "check": result.check,
        "status": result.status.value,
        "level": result.level.name,
        "failing": result.failing,
        "total": result.total,
        "error": result.error,
        "summary": result.summary(),
    }


def evaluate(
    chosen: Sequence[Entry], start: dt.datetime, end: dt.datetime
) -> tuple[list[str], dict[str, Summary]]:
    """Run the `chosen` checks (those due) for (start, end] together, recorded and alerted as in
    `dq run`: the tasks to follow (each check's `ok` when its outcome leaves it green, else its
    `result`, which fails; none: all skip) and each check's summary, also in the task log."""
    if not chosen:
        return [], {}
    from scheduling.runner import run_window
    from scheduling.settings import Settings

    config = Config.from_environment()
    settings = Settings.from_environment(config=config)
    run = run_window([e.name for e in chosen], start=start, end=end, settings=settings)
    summaries = {n: summary_of(r, run.readiness.get(n)) for n, r in run.results.items()}
    for summary in summaries.values():
        print(summary["summary"])
    defaults = config.task_states()
    follow = [
        ok_task(e) if green(e, summaries[e.name], defaults) else result_task(e) for e in chosen
    ]
    return follow, summaries


class CheckNotEvaluated(RuntimeError):
    """The check could not be evaluated (ERROR outcome) or its window is still held by another
    run: the task fails and Airflow retries it, which evaluates the check again."""


def settle(
    entry: Entry,
    summary: Summary | None,
    *,
    attempt: int,
    start: dt.datetime,
    end: dt.datetime,
    config: Config | None = None,
) -> Summary:
    """The check's task state from its outcome: returns the summary (task succeeds) or raises.
    A retry (`attempt` > 1) evaluates the check again (its ERROR window is claimed anew).
    `config` defaults to the environment's."""
    config = config or Config.from_environment()
    if attempt > 1 or summary is None:
        from scheduling.runner import run_window
        from scheduling.settings import Settings

        settings = Settings.from_environment(config=config)
        again = run_window([entry.name], start=start, end=end, retry_errors=True, settings=settings)
        summary = summary_of(again.results[entry.name], again.readiness.get(entry.name))
    print(summary["summary"])
    if summary["status"] == HELD:
        raise CheckNotEvaluated(str(summary["summary"]))
    if summary.get("readiness_error"):  # the outcome is recorded; the marker is not
        raise CheckNotEvaluated(f"{summary['check']}: {summary['readiness_error']}")
    verdict = states_of(entry, config.task_states()).verdict(
        str(summary["status"]), str(summary["level"])
    )
    if verdict is TaskVerdict.FAIL:
        from airflow.sdk.exceptions import AirflowFailException

        raise AirflowFailException(f"{summary['summary']} (no retry: the data decides)")
    if verdict is TaskVerdict.RETRY:
        raise CheckNotEvaluated(str(summary["summary"]))
    return summary


def publication(summary: Summary | None) -> dict[str, object]:
    """The asset event's extra (the readiness marker) when the check's run made its guarded
    asset ready; otherwise the publishing task skips, so no event reaches downstream DAGs."""
    if summary is None or not summary.get("ready"):
        from airflow.sdk.exceptions import AirflowSkipException

        why = summary.get("readiness") or summary["summary"] if summary else "no outcome"
        raise AirflowSkipException(f"not published: {why}")
    marker = summary.get("marker")
    return dict(marker) if isinstance(marker, dict) else {}


def due_on_assets(entries: Sequence[Entry], key: str) -> list[Entry]:
    """The entries a run started by upstream asset `key` (see `asset_key`) evaluates."""
    return [e for e in entries if key in {asset_key(a) for a in e.after}]
