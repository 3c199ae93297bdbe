"""Reconcile ended mutes, every tick before delivery: an (incident, receiver) whose latest
notification was suppressed is decided again once no mute covers its check, from the incident's
current state and what the receiver was actually told. So a recovery that happened inside a
silence still resolves PagerDuty and the Slack root, and a still-open incident is notified.
Each pair whose mute ended replays the decision stages of a recording (alerting.stages.notify);
the pairs a mute still covers are told apart in one read, at no transaction each. Notifications
an inhibition held back wait for their check's next run (alerting.inhibition)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Sequence

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

from alerting.inhibition import inhibited
from alerting.model import Notification
from alerting.mutes import Mute, muted_because
from alerting.policy import EscalationPolicy
from alerting.stages import notify
from alerting.store import IncidentStore, MuteStore, NotificationStore

#: Status of suppressed rows found, once their mute ended, to need no notification.
RECONCILED = "reconciled"


def reconcile_mutes(
    engine: Engine,
    policy_for: Callable[[str], EscalationPolicy],
    now: dt.datetime,
    *,
    mutes: Sequence[Mute] = (),
) -> list[Notification]:
    """Enqueue what receivers must hear now that the mutes hiding it ended; returns the new
    outbox rows. `policy_for(check_name)` gives the check's escalation policy; `mutes` are the
    configured ones (dq.toml silences, maintenance windows), dq_mutes rows are read here."""
    with engine.connect() as connection:
        pairs = NotificationStore(connection).suppressed_threads()
        active = [*mutes, *MuteStore(connection).silences()] if pairs else []
    enqueued = []
    for incident_id, receiver, check, fingerprint in pairs:
        if muted_because(check, now, active, fingerprint):
            continue  # still muted: its mute state did not change, nothing to decide again
        try:
            with engine.begin() as connection:
                notification = reconcile(connection, incident_id, receiver, policy_for, now, mutes)
        except sa.exc.IntegrityError:
            continue  # a concurrent run enqueued this very notification (same dedup key)
        if notification is not None:
            enqueued.append(notification)
    return enqueued


def reconcile(
    connection: Connection,
    incident_id: int,
    receiver: str,
    policy_for: Callable[[str], EscalationPolicy],
    now: dt.datetime,
    mutes: Sequence[Mute],
) -> Notification | None:
    """Decide again for one receiver of one incident, in `connection`'s transaction: nothing
    while a mute still covers the check; else the suppressed rows are settled, by a notification
    or as reconciled. Returns the notification enqueued, if any."""
    outbox = NotificationStore(connection)
    thread = outbox.thread(incident_id, receiver)
    links = outbox.links_if_suppressed(incident_id, thread)
    if links is None:
        return None  # another run got there first
    incidents = IncidentStore(connection)
    incident = incidents.get(incident_id)
    if incident.open and inhibited(outbox.held_back_because(incident_id, thread)):
        return None  # an inhibition, not a mute: decided again on the check's next run
    notices = notify(
        incident,
        {receiver: thread},
        policy_for(incident.check),
        now,
        mutes=[*mutes, *MuteStore(connection).silences()],
        outcome=incident.last_outcome,
        links=links,
        receivers=[receiver],
        replay=True,
    )
    [decision] = notices.decisions
    if decision.muted:
        return None
    incidents.keep_level(incident, notices.level)
    if decision.notification is None:
        outbox.settle_suppressed(incident_id, receiver, RECONCILED)
        return None
    outbox.enqueue(decision)
    return decision.notification
