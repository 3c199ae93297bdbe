"""Recording one outcome: its failing rows published for alerts to link to, then the run row,
incident, outbox rows and done claim in one transaction (spooled when the database is
unavailable). A run whose claim was taken over records nothing."""

from __future__ import annotations

import datetime as dt
import logging
from dataclasses import replace

from sqlalchemy.engine import Connection

from alerting import record_outcome
from alerting.inhibition import InhibitRule
from alerting.model import RUNBOOK_LINK
from checkers.outcome import CheckOutcome
from checks import QualityCheck
from checks.problems import DefinitionProblem
from scheduling.claims import Claim, ClaimLost, HeldWindows, current_claim
from scheduling.outage import record_or_spool
from scheduling.settings import Settings

log = logging.getLogger(__name__)

#: What runs: a check, or a check that could not be defined (recorded as its ERROR outcome).
Subject = type[QualityCheck] | DefinitionProblem


def save_failing_rows(
    settings: Settings, outcome: CheckOutcome, now: dt.datetime
) -> tuple[CheckOutcome, str | None]:
    """The outcome, with where its failing sample was written for alerts to link to, and why it
    could not be written (a full or read-only disk): the outcome is then recorded and alerted
    without the link, never lost with its file."""
    if settings.failing_rows is None or not outcome.sample:
        return outcome, None
    try:
        relative = settings.failing_rows.save(outcome, now)
    except OSError as exc:
        problem = f"{outcome.check}: failing rows not written ({exc.strerror or exc})"
        log.error("%s; the outcome is recorded without the link", problem)
        return outcome, problem
    return (replace(outcome, failing_rows=relative) if relative else outcome), None


def record(
    settings: Settings,
    claimed: HeldWindows,
    subject: Subject,
    outcome: CheckOutcome,
    now: dt.datetime,
    *,
    window: tuple[dt.datetime, dt.datetime] | None,
    inhibit_rule: InhibitRule | None = None,
    source: str | None = None,
) -> bool | Claim:
    """Record the outcome, its incident, outbox rows and done claim in one transaction: True, or
    False when the database is unavailable and the outcome was spooled instead. When our lease ran
    out and another run took the window over, nothing is recorded: returns that run's claim."""
    rows = settings.failing_rows
    links = {}
    if rows is not None and outcome.failing_rows:
        links[rows.label] = rows.link(outcome.failing_rows)
    runbook = getattr(subject, "runbook", None)
    if isinstance(runbook, str) and runbook:
        links[RUNBOOK_LINK] = runbook
    policy = settings.policy_for(subject)

    def in_transaction(connection: Connection) -> None:
        run = record_outcome(
            connection,
            outcome,
            policy,
            now,
            window=window,
            mutes=settings.mutes,
            links=links,
            page_url=settings.serve_url,
            inhibit_rule=inhibit_rule,
            source=source,
        )
        claimed.done(connection, subject.name, run.run_id, outcome.status.value)

    try:
        return record_or_spool(
            settings, outcome, policy, now, window=window, links=links, record=in_transaction
        )
    except ClaimLost as lost:
        log.warning("%s; its outcome is not recorded by this run", lost)
        assert window is not None  # only windows are claimed
        return current_claim(settings.engine, subject.name, window[0])
    finally:
        claimed.finished(subject.name)
