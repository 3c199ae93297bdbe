"""What the DAG's tasks do, apart from Airflow: `evaluate` picks the checks due in the run's
window and runs them all in one process (one Spark application per tick, one read per source, one
engine pass per dataset; an ERROR evaluated once more there), `outcome_task` names the kind of
each outcome, `shown` lists the outcomes the mapped `outcome` task shows (all but the passed
ones), and `settle` turns a failing outcome into its instance's failure. Airflow is imported
only for its exceptions. What only `evaluate` needs (claims, readiness, windows, alerting) is
imported there: an `outcome` or `tick` task process, one per red check and tick, imports the
rest alone."""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from checkers.outcome import CheckOutcome, Status
from checks.problems import DefinitionProblem
from checks.task_states import TaskStates, TaskVerdict
from scheduling.airflow.manifest import Entry, asset_key, clock_from_spec, manifest_drift
from scheduling.airflow.outcome_tasks import (
    NOT_RUN,
    PASSED,
    STALE_MANIFEST,
    OutcomeFailed,
    outcome_label,
)
from scheduling.config import Config

if TYPE_CHECKING:
    from scheduling.claims import Claim
    from scheduling.tick.readiness import Readiness

OUTCOMES = "outcomes"  # the XCom key of the summaries evaluate pushes
CHOSEN = "chosen"  # the XCom key of the names of the checks evaluate ran
HELD = "held"  # the status of a window another live run is evaluating
#: The pseudo-check whose ERROR outcome tells the platform's owner the manifest is stale; its
#: `outcome` instance fails in each run where the DAG's checks drifted from the code.
MANIFEST_CHECK = "dq_manifest"

log = logging.getLogger("dq.outcomes")

Summary = dict[str, object]
#: One instance of the mapped `outcome` task: {"check": name, "label": its name in the grid}.
Shown = dict[str, str]


def outcome_task(entry: Entry, summary: Summary, defaults: TaskStates) -> str:
    """The kind of `summary` (outcome_tasks.KINDS): ok, tolerated, warning (a failure the task
    states let pass), critical, failed (at or above the failing level), not_run (an ERROR
    outcome, a window another run holds, a marker not written)."""
    status, level = str(summary["status"]), str(summary.get("level", "OK"))
    if status == HELD or summary.get("readiness_error"):
        return NOT_RUN
    verdict = states_of(entry, defaults).verdict(status, level)
    if verdict is TaskVerdict.SUCCEED:
        return {"passed": "ok", "tolerated": "tolerated"}.get(status, "warning")
    if status == "error":
        return NOT_RUN
    return "critical" if level == "CRITICAL" else "failed"


def states_of(entry: Entry, defaults: TaskStates) -> TaskStates:
    """The check's own task states, else `defaults` (DQ_TASK_FAILS_AT, DQ_TASK_FAILS_ON_ERROR)."""
    return TaskStates.from_spec(entry.task_states) if entry.task_states else defaults


def due(entries: Sequence[Entry], start: dt.datetime, end: dt.datetime) -> list[Entry]:
    """The entries due in (start, end]: those whose clock fires, and every check that could not
    be defined (its ERROR outcome shows each tick, until it is fixed)."""
    from scheduling.windows import is_due

    return [
        e
        for e in entries
        if e.problem is not None or (e.clock and is_due(clock_from_spec(e.clock), start, end))
    ]


def summary_of(
    result: CheckOutcome | Claim,
    readiness: Readiness | None = None,
    *,
    serve_url: str | None = None,
) -> Summary:
    """An outcome (or a claim held elsewhere) as the JSON a task pushes to XCom, with what the
    run did to the readiness of the asset the check guards; `serve_url` (DQ_SERVE_URL) links
    a red outcome's one line to the check's page on `dq serve`."""
    from scheduling.claims import Claim

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
        "attempts": result.attempts,
        "summary": one_line(result, serve_url=serve_url),
    }


def one_line(outcome: CheckOutcome, *, serve_url: str | None = None) -> str:
    """The outcome's summary with its first failing keys (what a red task's failure says) and,
    unless it passed, the check's page on `dq serve` when `serve_url` is set."""
    keys = ", ".join(str(k) for k in outcome.failing_keys[:3])
    more = ", ..." if len(outcome.failing_keys) > 3 else ""
    line = outcome.summary() + (f"; failing keys: {keys}{more}" if keys else "")
    if serve_url and outcome.status not in (Status.PASSED, Status.TOLERATED):
        from scheduling.serve.pages import check_href

        line += f"; {serve_url.rstrip('/')}{check_href(outcome.check)}"
    return line


def log_summary(summary: Summary) -> None:
    """A green outcome at INFO, a failure at WARNING or ERROR by its level, could-not-run at
    ERROR: filtering a task log by ERROR finds the outcomes that need someone."""
    status, level = summary["status"], summary.get("level")
    if status in ("passed", "tolerated"):
        severity = logging.INFO
    elif status == "failed" and level in ("OK", "INFO", "WARNING"):
        severity = logging.WARNING
    else:
        severity = logging.ERROR
    log.log(severity, "%s", summary["summary"])


def stale_manifest(manifest: Path, config: Config) -> DefinitionProblem | None:
    """The manifest's drift from the checks' code on this worker, as a problem the platform's
    owner (DQ_PLATFORM_OWNER) is alerted of: an ERROR outcome of `dq_manifest`, whose open
    incident absorbs the repeats until the manifest is regenerated."""
    drift = manifest_drift(manifest)
    if drift is None:
        return None
    return DefinitionProblem(MANIFEST_CHECK, str(manifest), "", drift, owner=config.platform_owner)


def manifest_failure(summary: Summary | None) -> OutcomeFailed:
    """What fails the `manifest` task: the stale manifest's ERROR in one line (logged at ERROR
    too), which names the changed files and how to regenerate the manifest."""
    message = str((summary or {}).get("error") or "the check manifest is out of date")
    log.error("%s", message)
    return OutcomeFailed(message)


def evaluate(
    chosen: Sequence[Entry], start: dt.datetime, end: dt.datetime, *, manifest: Path
) -> tuple[list[Shown], dict[str, Summary]]:
    """Run the `chosen` checks (those due) for (start, end] together, recorded and alerted as in
    `dq run`, with the workers' code (a check edited since the manifest runs as edited): the
    outcomes the mapped `outcome` task shows (`shown`: every one but the passed, and the stale
    manifest's) and each check's summary, also in the task log by severity."""
    stale = stale_manifest(manifest, Config.from_environment())
    if not chosen and stale is None:
        return [], {}
    from scheduling.runner import run_window
    from scheduling.settings import Settings

    config = Config.from_environment()
    settings = Settings.from_environment(config=config)
    extra = [stale] if stale is not None else []
    names = [e.name for e in chosen]
    run = run_window(names, start=start, end=end, settings=settings, extra_problems=extra)
    page = settings.serve_url
    summaries = {
        n: summary_of(r, run.readiness.get(n), serve_url=page) for n, r in run.results.items()
    }
    for summary in summaries.values():
        log_summary(summary)
    return shown(chosen, summaries, config.task_states(), stale=stale is not None), summaries


def shown(
    chosen: Sequence[Entry], summaries: dict[str, Summary], defaults: TaskStates, *, stale: bool
) -> list[Shown]:
    """The `outcome` instances of a tick, in the order evaluated: one per check that did not
    pass, named by its kind and name, and the stale manifest's."""
    kinds = {e.name: outcome_task(e, summaries[e.name], defaults) for e in chosen}
    found = [
        {"check": e.name, "label": outcome_label(kinds[e.name], e.name)}
        for e in chosen
        if kinds[e.name] != PASSED
    ]
    return found + ([{"check": MANIFEST_CHECK, "label": STALE_MANIFEST}] if stale else [])


def tick_done(chosen: Sequence[str] | None, summaries: dict[str, Summary] | None) -> str:
    """The platform's verdict on a tick (the DAG run's state follows it): raises unless
    `evaluate` ran and gave every check it chose an outcome; a failing check does not fail it."""
    if chosen is None or summaries is None:
        raise CheckNotEvaluated("evaluate did not finish: no check of this tick was evaluated")
    missing = [n for n in chosen if n not in summaries]
    if missing:
        raise CheckNotEvaluated(f"no outcome for {', '.join(missing)}")
    red = sorted(n for n, s in summaries.items() if s["status"] in ("failed", "error", HELD))
    return f"{len(chosen)} check(s) evaluated; {len(red)} not green: {', '.join(red) or '-'}"


class CheckNotEvaluated(RuntimeError):
    """The check's window is still held by another run, or its marker was not written: the task
    fails and Airflow retries it, which evaluates the check again."""


def settle(
    entry: Entry,
    summary: Summary | None,
    *,
    attempt: int,
    start: dt.datetime,
    end: dt.datetime,
    config: Config | None = None,
) -> Summary:
    """The check's red task from its outcome: raises OutcomeFailed with the one-line summary (no
    retry), CheckNotEvaluated when the window is held elsewhere or the marker failed (Airflow
    retries), or returns the summary when a retry found the check green. A retry (`attempt` >
    1) evaluates the check again (its ERROR window is claimed anew). `config` defaults to the
    environment's."""
    config = config or Config.from_environment()
    if attempt > 1 or summary is None:
        from scheduling.runner import run_window
        from scheduling.settings import Settings

        settings = Settings.from_environment(config=config)
        again = run_window([entry.name], start=start, end=end, retry_errors=True, settings=settings)
        summary = summary_of(
            again.results[entry.name],
            again.readiness.get(entry.name),
            serve_url=settings.serve_url,
        )
    log_summary(summary)
    if summary["status"] == HELD:
        raise CheckNotEvaluated(str(summary["summary"]))
    if summary.get("readiness_error"):  # the outcome is recorded; the marker is not
        raise CheckNotEvaluated(f"{summary['check']}: {summary['readiness_error']}")
    verdict = states_of(entry, config.task_states()).verdict(
        str(summary["status"]), str(summary["level"])
    )
    if verdict is not TaskVerdict.SUCCEED:  # an ERROR was already evaluated twice in-process
        raise OutcomeFailed(str(summary["summary"]))
    return summary


def readiness_event(summary: Summary | None) -> dict[str, object] | None:
    """The asset event's extra (the readiness marker) when the check's run made its guarded
    asset ready, else None: no event reaches downstream DAGs."""
    if summary is None or not summary.get("ready"):
        return None
    marker = summary.get("marker")
    return dict(marker) if isinstance(marker, dict) else {}


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
