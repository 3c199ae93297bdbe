"""Running checks end to end: claim the windows, evaluate (checks on one source share its read
and engine pass), record each outcome with its incident, notifications and done claim in one
transaction, deliver. Checks run without a window (`dq run NAME`) are not claimed."""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field

from sqlalchemy.engine import Connection

from alerting import DeliveryReport, deliver_pending, record_outcome
from alerting.recording import record_in_transaction
from checkers.outcome import CheckOutcome
from checks import QualityCheck, registered
from scheduling.claims import (
    Claim,
    ClaimLost,
    ClaimState,
    HeldWindows,
    WindowHeld,
    current_claim,
    hold_windows,
    recorded_outcome,
)
from scheduling.settings import Settings
from scheduling.windows import Window, due_windows, last_window_ends, remember_window_ends


@dataclass
class RunReport:
    outcomes: list[CheckOutcome] = field(default_factory=list)
    windows: list[Window] = field(default_factory=list)
    delivery: DeliveryReport | None = None
    skipped: list[Claim] = field(default_factory=list)  # windows another run holds or did


log = logging.getLogger(__name__)


def run_checks(
    checks: Sequence[type[QualityCheck]],
    *,
    now: dt.datetime,
    settings: Settings,
    windows: Sequence[Window] = (),
    spark: object | None = None,
) -> RunReport:
    """Evaluate, record and alert. A failing or broken check never stops the others."""
    from checks.evaluation import evaluate_checks  # Spark only when something runs

    by_name = {w.check: (w.start, w.end) for w in windows}
    names = {c.name for c in checks}
    claimed = hold_windows(
        settings.engine, [(w.check, w.start, w.end) for w in windows if w.check in names]
    )
    checks = [c for c in checks if c.name not in claimed.skipped]
    skipped = list(claimed.skipped.values())
    recorded: list[CheckOutcome] = []
    with claimed:  # leases renewed while the checks evaluate
        outcomes = evaluate_checks(list(checks), spark=spark, now=now) if checks else []  # type: ignore[arg-type]
        for check, outcome in zip(checks, outcomes, strict=True):
            links = {}
            if settings.failing_rows is not None and outcome.sample:
                link = settings.failing_rows.write(outcome, now)
                if link:
                    links["failing rows"] = link

            lost = _record(
                settings, claimed, check, outcome, now, window=by_name.get(check.name), links=links
            )
            if lost is None:
                recorded.append(outcome)
            else:
                skipped.append(lost)
    delivery = deliver_pending(settings.engine, settings.receivers, now)
    return RunReport(recorded, list(windows), delivery, skipped)


def _record(
    settings: Settings,
    claimed: HeldWindows,
    check: type[QualityCheck],
    outcome: CheckOutcome,
    now: dt.datetime,
    *,
    window: tuple[dt.datetime, dt.datetime] | None,
    links: dict[str, str],
) -> Claim | None:
    """Record the outcome, its incident, outbox rows and done claim in one transaction (run once
    more if a concurrent run opened the same incident meanwhile). When our lease ran out and
    another run took the window over, nothing is recorded: returns that run's claim."""

    def record(connection: Connection) -> None:
        run = record_outcome(
            connection,
            outcome,
            settings.policy_for(check),
            now,
            window=window,
            mutes=settings.mutes,
            links=links,
        )
        claimed.done(connection, check.name, run.run_id, outcome.status.value)

    try:
        record_in_transaction(settings.engine, record)
    except ClaimLost as lost:
        log.warning("%s; its outcome is not recorded by this run", lost)
        assert window is not None  # only windows are claimed
        return current_claim(settings.engine, check.name, window[0])
    finally:
        claimed.finished(check.name)
    return None


def due(
    now: dt.datetime, *, settings: Settings, checks: Sequence[type[QualityCheck]] | None = None
) -> list[Window]:
    """The windows of the checks due at `now` (nothing runs)."""
    candidates = list(checks) if checks is not None else list(registered().values())
    return due_windows(
        [(c.name, c.clock) for c in candidates], now, last_window_ends(settings.engine)
    )


def run_due(
    now: dt.datetime,
    *,
    settings: Settings,
    checks: Sequence[type[QualityCheck]] | None = None,
    spark: object | None = None,
) -> RunReport:
    """One tick of the local scheduler: run what is due since each check's last window, then
    remember `now` as every considered check's last window end."""
    candidates = list(checks) if checks is not None else list(registered().values())
    windows = due(now, settings=settings, checks=candidates)
    names = {w.check for w in windows}
    report = run_checks(
        [c for c in candidates if c.name in names],
        now=now,
        settings=settings,
        windows=windows,
        spark=spark,
    )
    skipped = {c.check: c for c in report.skipped}
    remember_window_ends(
        settings.engine, [c.name for c in candidates if c.name not in skipped], now
    )
    for done in (c for c in skipped.values() if c.state is ClaimState.DONE):
        # its run may have died before remembering: the next window starts after the done one
        remember_window_ends(settings.engine, [done.check], done.end)
    # a window held by a live run is remembered by that run (or taken over once its lease expires)
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
    Airflow task's entry point). Checks come from the packages in DQ_CHECKS (default `checks`)."""
    import os

    from checks import discover
    from scheduling.settings import Settings

    found: dict[str, type[QualityCheck]] = {}
    for package in os.environ.get("DQ_CHECKS", "checks").split(","):
        found.update(discover(package.strip()))
    missing = [n for n in names if n not in found]
    if missing:
        raise LookupError(f"checks {missing} are not registered; is the manifest stale?")
    windows = [Window(n, start, end) for n in names]
    settings = Settings.from_environment()
    report = run_checks([found[n] for n in names], now=end, settings=settings, windows=windows)
    # a retry of a window already recorded reports that outcome; one still running elsewhere fails
    outcomes = {o.check: o for o in report.outcomes}
    for other in report.skipped:
        earlier = recorded_outcome(settings.engine, other.run_id)
        if other.state is not ClaimState.DONE or earlier is None:
            raise WindowHeld(other.describe())
        outcomes[other.check] = earlier
    return [outcomes[n] for n in names]
