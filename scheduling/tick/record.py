"""Recording one outcome: its failing rows published for alerts to link to, then the run row,
incident, outbox rows and done claim in one transaction (spooled when the database is
unavailable). A run whose claim was taken over records nothing."""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable, Iterable
from dataclasses import replace

from sqlalchemy.engine import Connection

from alerting import EscalationPolicy, Recorded, record_outcome
from alerting.inhibition import InhibitRule
from alerting.model import RUNBOOK_LINK
from checkers.outcome import CheckOutcome
from checks import QualityCheck
from checks.problems import DefinitionProblem
from scheduling.claims import Claim, ClaimLost, HeldWindows, current_claim
from scheduling.outage import record_or_spool
from scheduling.settings import Settings
from scheduling.spool import SpoolEntry
from scheduling.tick.inhibit_rules import inhibit_rules, source_key

log = logging.getLogger(__name__)

#: What runs: a check, or a check that could not be defined (recorded as its ERROR outcome).
Subject = type[QualityCheck] | DefinitionProblem


def save_failing_rows(settings: Settings, outcome: CheckOutcome, now: dt.datetime) -> CheckOutcome:
    """The outcome, with where its failing sample was written for alerts to link to."""
    if settings.failing_rows is None or not outcome.sample:
        return outcome
    relative = settings.failing_rows.save(outcome, now)
    return replace(outcome, failing_rows=relative) if relative else outcome


def record_in(
    connection: Connection,
    settings: Settings,
    outcome: CheckOutcome,
    policy: EscalationPolicy,
    now: dt.datetime,
    *,
    window: tuple[dt.datetime, dt.datetime] | None,
    links: dict[str, str],
    inhibit_rule: InhibitRule | None,
    source: str | None,
) -> Recorded:
    """The tick's one way to record an outcome (run row, incident, outbox rows) in
    `connection`'s transaction, live or replayed from the spool: with its inhibition rule and
    source key, unless the settings switch inhibition or grouping off."""
    return record_outcome(
        connection,
        outcome,
        policy if settings.grouping else replace(policy, group_by=()),
        now,
        window=window,
        mutes=settings.mutes,
        links=links,
        page_url=settings.serve_url,
        inhibit_rule=inhibit_rule if settings.inhibition else None,
        source=source,
    )


def replayer(
    settings: Settings,
    policy_for: Callable[[str], EscalationPolicy],
    checks: Iterable[type[QualityCheck]],
) -> Callable[[Connection, SpoolEntry], Recorded]:
    """How the tick records a spooled entry: as it records a live outcome, with the check's
    policy, inhibition rule and source key at the entry's time (a check no longer known: none)."""
    known = {c.name: c for c in checks}

    def record_entry(connection: Connection, entry: SpoolEntry) -> Recorded:
        check = known.get(entry.check)
        rules = inhibit_rules([check], entry.now, candidates=known.values()) if check else {}
        return record_in(
            connection,
            settings,
            entry.outcome,
            policy_for(entry.check),
            entry.now,
            window=entry.window,
            links=entry.links,
            inhibit_rule=rules.get(entry.check),
            source=source_key(check, entry.now) if check else None,
        )

    return record_entry


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
        run = record_in(
            connection,
            settings,
            outcome,
            policy,
            now,
            window=window,
            links=links,
            inhibit_rule=inhibit_rule,
            source=source,
        )
        claimed.done(connection, subject.name, run.run_id, outcome.status.value)

    try:
        return record_or_spool(
            settings, outcome, now, window=window, links=links, record=in_transaction
        )
    except ClaimLost as lost:
        log.warning("%s; its outcome is not recorded by this run", lost)
        assert window is not None  # only windows are claimed
        return current_claim(settings.engine, subject.name, window[0])
    finally:
        claimed.finished(subject.name)
