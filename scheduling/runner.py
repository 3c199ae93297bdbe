"""Running checks end to end: evaluate (checks on one source share its read and engine pass),
record each outcome with its incident and notifications in one transaction, deliver."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from alerting import DeliveryReport, EscalationPolicy, deliver_pending
from alerting.reconcile import reconcile_mutes
from checkers.outcome import CheckOutcome
from checks import QualityCheck, registered
from checks.problems import DefinitionProblem, problem_outcome
from scheduling.outage import record_or_spool, replay_spool, tolerated
from scheduling.settings import Settings
from scheduling.windows import Window, due_windows, last_window_ends, remember_window_ends


@dataclass
class RunReport:
    outcomes: list[CheckOutcome] = field(default_factory=list)
    windows: list[Window] = field(default_factory=list)
    delivery: DeliveryReport | None = None
    spooled: list[CheckOutcome] = field(default_factory=list)  # not recorded: database down
    database_error: str | None = None


def _policies(
    settings: Settings, checks: Sequence[type[QualityCheck]]
) -> Callable[[str], EscalationPolicy]:
    """Each check's policy by name (replayed and reconciled checks may not run in this tick)."""
    known = {c.name: settings.policy_for(c) for c in [*registered().values(), *checks]}
    return lambda name: known.get(name, settings.default_policy)


def run_checks(
    checks: Sequence[type[QualityCheck]],
    *,
    now: dt.datetime,
    settings: Settings,
    windows: Sequence[Window] = (),
    spark: object | None = None,
    problems: Sequence[DefinitionProblem] = (),
) -> RunReport:
    """Evaluate, record and alert. A failing or broken check never stops the others; each of
    `problems` (checks that could not be defined) is recorded and alerted as an ERROR outcome."""
    from checks.evaluation import evaluate_checks  # Spark only when something runs

    policy_for = _policies(settings, checks)
    replay_spool(settings, now, policy_for)  # what an outage spooled is recorded first
    by_name = {w.check: (w.start, w.end) for w in windows}
    outcomes = (
        evaluate_checks(
            list(checks),
            spark=spark,  # type: ignore[arg-type]
            now=now,
            deadline_s=settings.source_deadline_s,
            parallelism=settings.load_parallelism,
        )
        if checks
        else []
    )
    spooled = []
    outcomes = [*outcomes, *(problem_outcome(p, now) for p in problems)]
    subjects: list[type[QualityCheck] | DefinitionProblem] = [*checks, *problems]
    for check, outcome in zip(subjects, outcomes, strict=True):
        links = {}
        if settings.failing_rows is not None and outcome.sample:
            link = settings.failing_rows.write(outcome, now)
            if link:
                links["failing rows"] = link
        if not record_or_spool(
            settings,
            outcome,
            settings.policy_for(check),
            now,
            window=by_name.get(check.name),
            links=links,
        ):
            spooled.append(outcome)
    delivery = None
    with tolerated(settings):
        if settings.database_error is None:
            reconcile_mutes(settings.engine, policy_for, now, mutes=settings.mutes)
            delivery = deliver_pending(
                settings.engine, settings.receivers, now, retry=settings.delivery
            )
    return RunReport(list(outcomes), list(windows), delivery, spooled, settings.database_error)


def due(
    now: dt.datetime, *, settings: Settings, checks: Sequence[type[QualityCheck]] | None = None
) -> list[Window]:
    """The windows of the checks due at `now` (nothing runs)."""
    candidates = list(checks) if checks is not None else list(registered().values())
    last: dict[str, dt.datetime] = {}  # database unavailable: every check looks back one tick
    with tolerated(settings):
        if settings.database_error is None:
            last = last_window_ends(settings.engine)
    return due_windows([(c.name, c.clock) for c in candidates], now, last)


def run_due(
    now: dt.datetime,
    *,
    settings: Settings,
    checks: Sequence[type[QualityCheck]] | None = None,
    spark: object | None = None,
    problems: Sequence[DefinitionProblem] = (),
) -> RunReport:
    """One tick of the local scheduler: run what is due since each check's last window, then
    remember `now` as every considered check's last window end. `problems` are reported as
    ERROR outcomes every tick (their open incident absorbs the repeats)."""
    candidates = list(checks) if checks is not None else list(registered().values())
    replay_spool(settings, now, _policies(settings, candidates))  # replayed windows count as run
    windows = due(now, settings=settings, checks=candidates)
    names = {w.check for w in windows}
    report = run_checks(
        [c for c in candidates if c.name in names],
        now=now,
        settings=settings,
        windows=windows,
        spark=spark,
        problems=problems,
    )
    with tolerated(settings):
        if settings.database_error is None:
            remember_window_ends(settings.engine, [c.name for c in candidates], now)
    report.database_error = settings.database_error
    return report


def run_check(
    check: type[QualityCheck],
    *,
    now: dt.datetime | None = None,
    settings: Settings | None = None,
    spark: object | None = None,
) -> CheckOutcome:
    """Run one check whatever its clock says: evaluate, record, alert. Settings default to the
    environment's, `now` to the current time."""
    from checkers.storage import utc_now

    chosen = settings or Settings.from_environment()
    return run_checks([check], now=now or utc_now(), settings=chosen, spark=spark).outcomes[0]


def run_named(names: Sequence[str], *, start: dt.datetime, end: dt.datetime) -> list[CheckOutcome]:
    """Run the named checks for the window (start, end] with settings from the environment (the
    Airflow task's entry point). Checks come from the packages in DQ_CHECKS (default `checks`).
    A name that could not be defined (or was not found) is that check's ERROR outcome."""
    import os

    from checks.registry import discover_all

    found = discover_all(os.environ.get("DQ_CHECKS", "checks").split(","))
    good = [found.checks[n] for n in names if n in found.checks]
    problems = [found.problem(n) or found.missing(n) for n in names if n not in found.checks]
    windows = [Window(n, start, end) for n in names]
    report = run_checks(
        good, now=end, settings=Settings.from_environment(), windows=windows, problems=problems
    )
    by_name = {o.check: o for o in report.outcomes}
    return [by_name[n] for n in names]
