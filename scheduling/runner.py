"""Running checks end to end: replay what an outage spooled, claim the windows, evaluate (checks on
one source share its read and engine pass), record each outcome with its incident, notifications
and done claim in one transaction (spooled when the database is unavailable), reconcile ended
silences, deliver. Checks run without a window (`dq run NAME`) are not claimed."""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

from sqlalchemy.engine import Connection

from alerting import DeliveryReport, EscalationPolicy, deliver_pending, record_outcome
from alerting.pipeline import open_incident_levels
from alerting.reconcile import reconcile_mutes
from checkers.levels import AlertLevel
from checkers.outcome import CheckOutcome
from checks import QualityCheck, registered
from checks.problems import DefinitionProblem, problem_outcome
from checks.readiness import Readiness, publish_readiness
from scheduling.claims import (
    Claim,
    ClaimLost,
    ClaimState,
    HeldWindows,
    WindowHeld,
    current_claim,
    hold_windows,
    lease_from_environment,
    new_holder,
    recorded_outcome,
)
from scheduling.outage import record_or_spool, replay_spool, tolerated
from scheduling.settings import Settings
from scheduling.windows import Window, due_windows, last_window_ends, remember_window_ends

log = logging.getLogger(__name__)

#: What runs: a check, or a check that could not be defined (recorded as its ERROR outcome).
Subject = type[QualityCheck] | DefinitionProblem


@dataclass
class RunReport:
    outcomes: list[CheckOutcome] = field(default_factory=list)
    windows: list[Window] = field(default_factory=list)
    delivery: DeliveryReport | None = None
    spooled: list[CheckOutcome] = field(default_factory=list)  # not recorded: database down
    database_error: str | None = None
    skipped: list[Claim] = field(default_factory=list)  # windows another run holds or did
    #: What each guarded check's run did to its asset's readiness marker; `error`: not written.
    readiness: list[Readiness] = field(default_factory=list)
    #: Check -> the effective (escalated) level of its open incident after this run.
    escalated: dict[str, AlertLevel] = field(default_factory=dict)


#: Told what a run does next ("evaluating 10 checks", "recording 3/10: x"): a live display.
Progress = Callable[[str], None]


def _quiet(stage: str) -> None:
    """The default Progress: nobody is watching."""


def _policies(
    settings: Settings, checks: Sequence[type[QualityCheck]]
) -> Callable[[str], EscalationPolicy]:
    """Each check's policy by name (replayed and reconciled checks may not run in this tick)."""
    known = {c.name: settings.policy_for(c) for c in [*registered().values(), *checks]}
    return lambda name: known.get(name, settings.default_policy)


def _hold(
    settings: Settings, windows: Sequence[Window], names: set[str], *, retry_errors: bool
) -> HeldWindows:
    """Claim the windows of `names`; none while the database is unavailable (outcomes spool)."""
    if settings.database_error is None:
        with tolerated(settings):
            return hold_windows(
                settings.engine,
                [(w.check, w.start, w.end) for w in windows if w.check in names],
                retry_errors=retry_errors,
            )
    return HeldWindows(settings.engine, new_holder(), lease_from_environment())


def run_checks(
    checks: Sequence[type[QualityCheck]],
    *,
    now: dt.datetime,
    settings: Settings,
    windows: Sequence[Window] = (),
    spark: object | None = None,
    problems: Sequence[DefinitionProblem] = (),
    retry_errors: bool = False,
    progress: Progress = _quiet,
) -> RunReport:
    """Evaluate, record and alert. A failing or broken check never stops the others; each of
    `problems` (checks that could not be defined) is recorded and alerted as an ERROR outcome.
    A window another run holds or has done is skipped (`RunReport.skipped`), unless
    `retry_errors` and its recorded outcome is ERROR: then it is evaluated again. `progress`
    is told each stage."""
    from checks.evaluation import evaluate_checks  # Spark only when something runs

    policy_for = _policies(settings, checks)
    replay_spool(settings, now, policy_for)  # what an outage spooled is recorded first
    by_name = {w.check: (w.start, w.end) for w in windows}
    claimed = _hold(settings, windows, {c.name for c in checks}, retry_errors=retry_errors)
    checks = [c for c in checks if c.name not in claimed.skipped]
    skipped = list(claimed.skipped.values())
    outcomes: list[CheckOutcome] = []
    spooled: list[CheckOutcome] = []
    gates: list[Readiness] = []
    with claimed:  # leases renewed while the checks evaluate
        progress(f"evaluating {len(checks)} check{'' if len(checks) == 1 else 's'}")
        evaluated = (
            evaluate_checks(
                list(checks),
                spark=spark,  # type: ignore[arg-type]
                now=now,
                deadline_s=settings.source_deadline_s,
                parallelism=settings.load_parallelism,
                partitions=settings.partition_store(),
            )
            if checks
            else []
        )
        evaluated = [*evaluated, *(problem_outcome(p, now) for p in problems)]
        subjects: list[Subject] = [*checks, *problems]
        for done, (subject, evaluated_outcome) in enumerate(zip(subjects, evaluated, strict=True)):
            progress(f"recording {done + 1}/{len(subjects)}: {subject.name}")
            window = by_name.get(subject.name)
            outcome = _save_failing_rows(settings, evaluated_outcome, now)
            recorded = _record(settings, claimed, subject, outcome, now, window=window)
            if isinstance(recorded, Claim):  # another run took the window over
                skipped.append(recorded)
                continue
            outcomes.append(outcome)
            if not recorded:
                spooled.append(outcome)
            # after the record: a crash in between leaves no marker (checks/readiness.py)
            engine = settings.engine if recorded else None
            if gate := publish_readiness(engine, subject, outcome, now, window=window):
                gates.append(gate)
    delivery = None
    escalated: dict[str, AlertLevel] = {}
    progress("delivering notifications")
    with tolerated(settings):
        if settings.database_error is None:
            reconcile_mutes(settings.engine, policy_for, now, mutes=settings.mutes)
            delivery = deliver_pending(
                settings.engine, settings.receivers, now, retry=settings.delivery
            )
            with settings.engine.connect() as connection:
                escalated = open_incident_levels(connection, [o.check for o in outcomes])
    return RunReport(
        outcomes,
        list(windows),
        delivery,
        spooled,
        settings.database_error,
        skipped,
        gates,
        escalated=escalated,
    )


def _save_failing_rows(settings: Settings, outcome: CheckOutcome, now: dt.datetime) -> CheckOutcome:
    """The outcome, with where its failing sample was written for alerts to link to."""
    if settings.failing_rows is None or not outcome.sample:
        return outcome
    relative = settings.failing_rows.save(outcome, now)
    return replace(outcome, failing_rows=relative) if relative else outcome


def _record(
    settings: Settings,
    claimed: HeldWindows,
    subject: Subject,
    outcome: CheckOutcome,
    now: dt.datetime,
    *,
    window: tuple[dt.datetime, dt.datetime] | None,
) -> bool | Claim:
    """Record the outcome, its incident, outbox rows and done claim in one transaction: True, or
    False when the database is unavailable and the outcome was spooled instead. When our lease ran
    out and another run took the window over, nothing is recorded: returns that run's claim."""
    rows = settings.failing_rows
    links = {}
    if rows is not None and outcome.failing_rows:
        links[rows.label] = rows.link(outcome.failing_rows)
    policy = settings.policy_for(subject)

    def record(connection: Connection) -> None:
        run = record_outcome(
            connection,
            outcome,
            policy,
            now,
            window=window,
            mutes=settings.mutes,
            links=links,
        )
        claimed.done(connection, subject.name, run.run_id, outcome.status.value)

    try:
        return record_or_spool(
            settings, outcome, policy, now, window=window, links=links, record=record
        )
    except ClaimLost as lost:
        log.warning("%s; its outcome is not recorded by this run", lost)
        assert window is not None  # only windows are claimed
        return current_claim(settings.engine, subject.name, window[0])
    finally:
        claimed.finished(subject.name)


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
    progress: Progress = _quiet,
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
        progress=progress,
    )
    skipped = {c.check: c for c in report.skipped}
    with tolerated(settings):
        if settings.database_error is None:
            remember_window_ends(
                settings.engine, [c.name for c in candidates if c.name not in skipped], now
            )
            for done in (c for c in skipped.values() if c.state is ClaimState.DONE):
                # its run may have died before remembering: the next window starts after it
                remember_window_ends(settings.engine, [done.check], done.end)
    # a window held by a live run is remembered by that run (or taken over once its lease expires)
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
) -> WindowResults:
    """Run the named checks for the window (start, end] with settings from the environment (the
    Airflow tasks' entry point), from the check packages (DQ_CHECKS or dq.toml's `checks`). A
    name that could not be defined (or was not found) is that check's ERROR outcome. A window
    already recorded gives the recorded outcome (with `retry_errors`, an ERROR one is evaluated
    again); one a live run still holds gives that run's claim."""
    from checkers.shipping import checks_packages
    from checks.registry import discover_all

    found = discover_all(checks_packages())
    good = [found.checks[n] for n in names if n in found.checks]
    problems = [found.problem(n) or found.missing(n) for n in names if n not in found.checks]
    windows = [Window(n, start, end) for n in names]
    chosen = settings or Settings.from_environment()
    report = run_checks(
        good,
        now=end,
        settings=chosen,
        windows=windows,
        problems=problems,
        retry_errors=retry_errors,
    )
    results: dict[str, CheckOutcome | Claim] = {o.check: o for o in report.outcomes}
    for other in report.skipped:
        earlier = recorded_outcome(chosen.engine, other.run_id)
        done = other.state is ClaimState.DONE and earlier is not None
        results[other.check] = earlier if done else other  # type: ignore[assignment]
    readiness = {r.check: r for r in report.readiness}
    return WindowResults({n: results[n] for n in names}, readiness)


def run_named(names: Sequence[str], *, start: dt.datetime, end: dt.datetime) -> list[CheckOutcome]:
    """`run_window` for callers that need every outcome: a window still running elsewhere raises
    WindowHeld (an Airflow task then retries later)."""
    results = run_window(names, start=start, end=end).results
    held = [r for r in results.values() if isinstance(r, Claim)]
    if held:
        raise WindowHeld(held[0].describe())
    return [r for r in results.values() if isinstance(r, CheckOutcome)]
