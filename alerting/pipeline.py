"""From an outcome to durable notifications, in the caller's transaction: the run row, the
incident and the outbox rows are committed together, so an alert is never lost between them.
The decisions are the pure stages of alerting.stages; the SQL around them is alerting.store."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass, field

from sqlalchemy.engine import Connection, Engine

from alerting.grouping import group_key
from alerting.groups import join_group
from alerting.inhibition import InhibitRule, inhibit, inhibited, inhibition_of
from alerting.model import (
    Alert,
    Incident,
    IncidentChange,
    Notification,
    NotifyReason,
    update_incident,
)
from alerting.mutes import Mute
from alerting.notes import enqueue_note
from alerting.policy import EscalationPolicy
from alerting.recording import record_in_transaction
from alerting.stages import Notices, notify
from alerting.store import IncidentStore, MuteStore, NotificationStore, inserted_id
from alerting.tables import runs
from checkers.levels import AlertLevel
from checkers.outcome import CheckOutcome


@dataclass
class Recorded:
    """What recording one outcome did."""

    run_id: int
    incident: Incident | None
    change: IncidentChange
    enqueued: list[Notification] = field(default_factory=list)
    suppressed: dict[str, str] = field(default_factory=dict)  # receiver -> mute reason


def insert_run(
    connection: Connection,
    outcome: CheckOutcome,
    window: tuple[dt.datetime, dt.datetime] | None = None,
) -> int:
    # values as parameters, not .values(): one cached statement, not one compiled per row
    result = connection.execute(
        runs.insert(),
        {
            "check_name": outcome.check,
            "window_start": window[0] if window else None,
            "window_end": window[1] if window else None,
            "status": outcome.status.value,
            "level": int(outcome.level),
            "failing": outcome.failing,
            "total": outcome.total,
            "started_at": outcome.started_at,
            "finished_at": outcome.finished_at,
            "error": outcome.error,
            "outcome": outcome.to_json(),
        },
    )
    return inserted_id(result)


def open_incident_levels(connection: Connection, checks: Sequence[str]) -> dict[str, AlertLevel]:
    """Each of `checks` with an open incident: the level alerting last decided for it
    (escalation included; the latest run's level for incidents recorded before migration 8)."""
    return IncidentStore(connection).open_levels(checks)


def record_outcome(
    connection: Connection,
    outcome: CheckOutcome,
    policy: EscalationPolicy,
    now: dt.datetime,
    *,
    window: tuple[dt.datetime, dt.datetime] | None = None,
    mutes: Sequence[Mute] = (),
    links: dict[str, str] | None = None,
    page_url: str | None = None,
    inhibit_rule: InhibitRule | None = None,
    source: str | None = None,
) -> Recorded:
    """Record `outcome` (run row, incident, outbox) in `connection`'s transaction. With
    `page_url` (DQ_SERVE_URL) the notifications link to the incident's page. With
    `inhibit_rule`, an open incident of one of its inhibitors holds the notifications back
    (written suppressed) and a newly opened incident is listed in the inhibitor's thread. A
    newly opened incident joins its group of this moment when the policy groups (`group_by`;
    `source` is what the check reads, for grouping by source)."""
    run_id = insert_run(connection, outcome, window)
    incidents, outbox = IncidentStore(connection), NotificationStore(connection)
    alert = Alert.from_outcome(outcome)
    incident, change = update_incident(incidents.open_incident(alert.fingerprint), alert, now)
    recorded = Recorded(run_id, incident, change)
    if incident is None or change is IncidentChange.NONE:
        return recorded
    incident = recorded.incident = incidents.save(incident)
    assert incident.id is not None
    opened = change is IncidentChange.OPENED  # a new id: no threads or outbox rows to look up
    notices = notify(
        incident,
        {} if opened else outbox.threads(incident.id),
        policy,
        now,
        mutes=[*mutes, *MuteStore(connection).silences()],
        outcome=outcome,
        links=links,
        page_url=page_url,
    )
    incidents.keep_level(incident, notices.level)
    notices = _inhibited(connection, incident, change, notices, inhibit_rule, now)
    folded: set[str] = set()
    key = group_key(policy.group_by, outcome, source)
    held = any(inhibited(d.muted) for d in notices.decisions)
    if key is not None and change is IncidentChange.OPENED and not held:
        decisions, folded = join_group(connection, incident, notices.decisions, key)
        notices = Notices(notices.level, decisions)
    for decision in notices.decisions:
        if decision.notification is not None:
            outbox.enqueue(decision, grouped=decision.receiver in folded, opened=opened)
    recorded.enqueued, recorded.suppressed = notices.enqueued, notices.suppressed
    return recorded


def _inhibited(
    connection: Connection,
    incident: Incident,
    change: IncidentChange,
    notices: Notices,
    rule: InhibitRule | None,
    now: dt.datetime,
) -> Notices:
    """`notices` held back by an open inhibitor's incident, if one explains this one; a newly
    opened incident is then listed in the inhibitor's thread."""
    if rule is None:
        return notices
    store = IncidentStore(connection)
    inhibitors = store.open_of_checks([i.check for i in rule.inhibitors])
    inhibition = inhibition_of(incident, notices.level, rule, inhibitors)
    if inhibition is None:
        return notices
    if change is IncidentChange.OPENED:
        other = inhibition.incident
        level = store.open_levels([other.check]).get(other.check, other.level)
        note = inhibition.also_failing(incident, notices.level)
        enqueue_note(connection, other, level, now, note, NotifyReason.ALSO_FAILING)
    return Notices(notices.level, inhibit(notices.decisions, inhibition))


def handle_outcome(
    engine: Engine,
    outcome: CheckOutcome,
    policy: EscalationPolicy,
    now: dt.datetime,
    *,
    window: tuple[dt.datetime, dt.datetime] | None = None,
    mutes: Sequence[Mute] = (),
    links: dict[str, str] | None = None,
    page_url: str | None = None,
    inhibit_rule: InhibitRule | None = None,
    source: str | None = None,
) -> Recorded:
    """`record_outcome` in a transaction of its own."""
    return record_in_transaction(
        engine,
        lambda connection: record_outcome(
            connection,
            outcome,
            policy,
            now,
            window=window,
            mutes=mutes,
            links=links,
            page_url=page_url,
            inhibit_rule=inhibit_rule,
            source=source,
        ),
    )
