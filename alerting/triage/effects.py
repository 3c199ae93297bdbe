"""What triage tells the receivers, through the outbox (so delivery stays crash-safe and
retried): an acknowledgement to every receiver already told of the incident (a Slack thread
reply and root edit, a PagerDuty `acknowledge`), and a resolution as expected through the
decision stages, exactly as a passing run resolves an incident."""

from __future__ import annotations

import datetime as dt

from sqlalchemy.engine import Connection

from alerting.model import Incident, NotifyReason
from alerting.notes import enqueue_note, latest_links
from alerting.policy import EscalationPolicy
from alerting.stages import notify
from alerting.store import IncidentStore, MuteStore, NotificationStore
from checkers.levels import AlertLevel


def enqueue_acknowledgement(
    connection: Connection, incident: Incident, level: AlertLevel, now: dt.datetime, note: str
) -> list[str]:
    """Enqueue `note` for each receiver told of the incident; returns their names. A receiver
    whose latest notice a mute holds back hears the incident's state when the mute ends
    (alerting.reconcile), and the acknowledgement then shows on its root."""
    return enqueue_note(connection, incident, level, now, note, NotifyReason.ACKNOWLEDGED)


def enqueue_snooze_line(
    connection: Connection, incident: Incident, level: AlertLevel, now: dt.datetime, note: str
) -> list[str]:
    """Enqueue the snooze's line ("Snoozed for 4h by @ana (until ...)") for each receiver told
    of the incident, before the snooze's silence holds its later notices back; returns their
    names. Slack: a thread reply, the root unchanged; PagerDuty: nothing (the page stays)."""
    return enqueue_note(connection, incident, level, now, note, NotifyReason.SNOOZED)


def enqueue_resolution(
    connection: Connection, incident: Incident, now: dt.datetime, note: str
) -> list[str]:
    """The resolved `incident` through the decision stages: every receiver told of it hears the
    resolution (held back while a mute covers it, like any other); returns their names."""
    assert incident.id is not None
    outbox = NotificationStore(connection)
    notices = notify(
        incident,
        outbox.threads(incident.id),
        EscalationPolicy(),  # a resolution goes to the receivers told; routes play no part
        now,
        mutes=MuteStore(connection).silences(),
        outcome=incident.last_outcome,
        links=latest_links(connection, incident.id),
        note=note,
    )
    IncidentStore(connection).keep_level(incident, notices.level)
    for decision in notices.decisions:
        if decision.notification is not None:
            outbox.enqueue(decision)
    return [n.receiver for n in notices.enqueued]
