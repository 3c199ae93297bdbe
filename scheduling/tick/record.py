"""Recording outcomes: each one's failing rows published for alerts to link to, then its run row,
incident, outbox rows and done claim in one transaction, many outcomes to a transaction (spooled
when the database is unavailable). A run whose claim was taken over records nothing."""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from alerting import EscalationPolicy, Recorded, record_outcome
from alerting.inhibition import InhibitRule
from alerting.model import RUNBOOK_LINK
from alerting.recording import record_in_transaction
from checkers.outcome import CheckOutcome
from checks import QualityCheck
from checks.problems import DefinitionProblem
from scheduling.claims import Claim, ClaimLost, HeldWindows, current_claim
from scheduling.outage import database_unavailable, record_or_spool, unavailable
from scheduling.settings import Settings
from scheduling.spool import SpoolEntry
from scheduling.tick.inhibit_rules import inhibit_rules, source_key

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


@dataclass(frozen=True)
class Recording:
    """One outcome to record, with what its alert needs: its window, the inhibition rule it
    sets and the source it is grouped by."""

    subject: Subject
    outcome: CheckOutcome
    window: tuple[dt.datetime, dt.datetime] | None = None
    inhibit_rule: InhibitRule | None = None
    source: str | None = None


#: Outcomes recorded per transaction: one commit (an fsync on SQLite) for many outcomes, and a
#: transaction short enough not to hold SQLite's write lock for long.
BATCH = 250


def record_all(
    settings: Settings, claimed: HeldWindows, recordings: Sequence[Recording], now: dt.datetime
) -> list[bool | Claim]:
    """Record each outcome with its incident, outbox rows and done claim (see `record`), up to
    BATCH of them in one transaction: a crash or an outage rolls a batch back whole, never half
    of one outcome. A batch with a lost claim or an outage falls back to one transaction per
    outcome (which spools, or skips the lost window). Results in the order given."""
    results: list[bool | Claim] = []
    for start in range(0, len(recordings), BATCH):
        batch = recordings[start : start + BATCH]
        if _record_batch(settings, claimed, batch, now):
            results += [True] * len(batch)
        else:
            results += [record(settings, claimed, item, now) for item in batch]
    return results


def _record_batch(
    settings: Settings, claimed: HeldWindows, batch: Sequence[Recording], now: dt.datetime
) -> bool:
    if settings.database_error is not None or len(batch) < 2:
        return False
    steps = [_in_transaction(settings, claimed, item, now) for item in batch]
    try:
        record_in_transaction(settings.engine, lambda c: [step(c) for step in steps])
    except ClaimLost:
        return False  # which one: each again on its own
    except sa.exc.SQLAlchemyError as exc:
        if not unavailable(exc):
            raise
        database_unavailable(settings, exc)
        return False
    for item in batch:
        claimed.finished(item.subject.name)
    return True


def _links(settings: Settings, item: Recording) -> dict[str, str]:
    rows = settings.failing_rows
    links = {}
    if rows is not None and item.outcome.failing_rows:
        links[rows.label] = rows.link(item.outcome.failing_rows)
    runbook = getattr(item.subject, "runbook", None)
    if isinstance(runbook, str) and runbook:
        links[RUNBOOK_LINK] = runbook
    return links


def _in_transaction(
    settings: Settings, claimed: HeldWindows, item: Recording, now: dt.datetime
) -> Callable[[Connection], None]:
    """Recording `item` inside a given transaction: run row, incident, outbox rows, done claim."""
    links = _links(settings, item)
    policy = settings.policy_for(item.subject)

    def in_transaction(connection: Connection) -> None:
        run = record_in(
            connection,
            settings,
            item.outcome,
            policy,
            now,
            window=item.window,
            links=links,
            inhibit_rule=item.inhibit_rule,
            source=item.source,
        )
        claimed.done(connection, item.subject.name, run.run_id, item.outcome.status.value)

    return in_transaction


def record(
    settings: Settings, claimed: HeldWindows, item: Recording, now: dt.datetime
) -> bool | Claim:
    """Record the outcome, its incident, outbox rows and done claim in one transaction: True, or
    False when the database is unavailable and the outcome was spooled instead. When our lease ran
    out and another run took the window over, nothing is recorded: returns that run's claim."""
    outcome, window = item.outcome, item.window
    try:
        return record_or_spool(
            settings,
            outcome,
            now,
            window=window,
            links=_links(settings, item),
            record=_in_transaction(settings, claimed, item, now),
        )
    except ClaimLost as lost:
        log.warning("%s; its outcome is not recorded by this run", lost)
        assert window is not None  # only windows are claimed
        return current_claim(settings.engine, item.subject.name, window[0])
    finally:
        claimed.finished(item.subject.name)
