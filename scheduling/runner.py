"""Entry points onto the tick (scheduling/tick/pipeline.py): `run_due` (a scheduler's tick),
`run_checks` and `run_check` (a manual run: nothing claimed), `run_window` (an Airflow task's
window); `due` lists what is due without running anything. Each builds one `TickRequest`."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from checkers.outcome import CheckOutcome
from checks import QualityCheck, registered
from checks.problems import DefinitionProblem
from scheduling.claims import Claim, ClaimState, recorded_outcome
from scheduling.settings import Settings
from scheduling.tick.pipeline import TickRequest, run_tick, windows_due
from scheduling.tick.readiness import Readiness
from scheduling.tick.report import Progress, RunReport, quiet
from scheduling.windows import Window

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["RunReport", "WindowResults", "due", "run_check", "run_checks", "run_due", "run_window"]


def run_checks(
    checks: Sequence[type[QualityCheck]],
    *,
    now: dt.datetime,
    settings: Settings,
    windows: Sequence[Window] = (),
    spark: SparkSession | None = None,
    problems: Sequence[DefinitionProblem] = (),
    retry_errors: bool = False,
    retry_after_s: float | None = None,
    progress: Progress = quiet,
) -> RunReport:
    """Evaluate, record and alert. A failing or broken check never stops the others; each of
    `problems` (checks that could not be defined) is recorded and alerted as an ERROR outcome.
    `windows` are claimed: one another run holds or has done is skipped (`RunReport.skipped`),
    unless `retry_errors` and its recorded outcome is ERROR: then it is evaluated again.
    `retry_after_s`: an ERROR that opens an incident is evaluated once more after that delay."""
    request = TickRequest(
        now,
        checks,
        problems,
        windows=windows,
        retry_errors=retry_errors,
        retry_after_s=retry_after_s,
        spark=spark,
        progress=progress,
    )
    return run_tick(request, settings)


def due(
    now: dt.datetime, *, settings: Settings, checks: Sequence[type[QualityCheck]] | None = None
) -> list[Window]:
    """The windows of the checks due at `now` (nothing runs)."""
    candidates = list(checks) if checks is not None else list(registered().values())
    return windows_due(settings, candidates, now)


def run_due(
    now: dt.datetime,
    *,
    settings: Settings,
    checks: Sequence[type[QualityCheck]] | None = None,
    spark: SparkSession | None = None,
    problems: Sequence[DefinitionProblem] = (),
    progress: Progress = quiet,
) -> RunReport:
    """One tick of the local scheduler: run what is due since each check's last window, then
    remember `now` as every considered check's last window end. `problems` are reported as
    ERROR outcomes every tick (their open incident absorbs the repeats)."""
    candidates = list(checks) if checks is not None else list(registered().values())
    request = TickRequest(now, candidates, problems, due=True, spark=spark, progress=progress)
    return run_tick(request, settings)


def run_check(
    check: type[QualityCheck],
    *,
    now: dt.datetime | None = None,
    settings: Settings | None = None,
    spark: SparkSession | None = None,
) -> CheckOutcome:
    """Run one check whatever its clock says: evaluate, record, alert. Settings default to the
    environment's, `now` to the current time."""
    from checkers.project_db import utc_now

    chosen = settings or Settings.from_environment()
    return run_checks([check], now=now or utc_now(), settings=chosen, spark=spark).outcomes[0]


@dataclass
class WindowResults:
    """What `run_window` gives each named check: its outcome (or the claim of a live run still
    holding the window), and what the run did to the readiness of the asset it guards."""

    results: dict[str, CheckOutcome | Claim]
    readiness: dict[str, Readiness] = field(default_factory=dict)


def run_window(
    names: Sequence[str],
    *,
    start: dt.datetime,
    end: dt.datetime,
    retry_errors: bool = False,
    settings: Settings | None = None,
    extra_problems: Sequence[DefinitionProblem] = (),
) -> WindowResults:
    """Run the named checks for the window (start, end] with settings from the environment (the
    Airflow tasks' entry point), from the check packages (DQ_CHECKS or dq.toml's `checks`). A
    name that could not be defined (or was not found) is that check's ERROR outcome. A window
    already recorded gives the recorded outcome (with `retry_errors`, an ERROR one is evaluated
    again); one a live run still holds gives that run's claim. An ERROR that opens an incident
    is evaluated once more in the same Spark session (DQ_ERROR_RETRY_DELAY_S).
    `extra_problems` (a stale manifest) are ERROR outcomes of their own names."""
    from checkers.shipping import checks_packages
    from checks.registry import discover_all

    found = discover_all(checks_packages())
    good = [found.checks[n] for n in names if n in found.checks]
    problems = [found.problem(n) or found.missing(n) for n in names if n not in found.checks]
    problems += extra_problems
    names = [*names, *(p.name for p in extra_problems)]
    windows = [Window(n, start, end) for n in names]
    chosen = settings or Settings.from_environment()
    report = run_checks(
        good,
        now=end,
        settings=chosen,
        windows=windows,
        problems=problems,
        retry_errors=retry_errors,
        retry_after_s=chosen.config.retry_after_s() if chosen.config else None,
    )
    results: dict[str, CheckOutcome | Claim] = {o.check: o for o in report.outcomes}
    for other in report.skipped:
        earlier = recorded_outcome(chosen.engine, other.run_id)
        done = other.state is ClaimState.DONE
        results[other.check] = earlier if done and earlier is not None else other
    readiness = {r.check: r for r in report.readiness}
    return WindowResults({n: results[n] for n in names}, readiness)
