"""The decision path as pure stages over values, in this order:

    Alert.from_outcome -> update_incident -> effective_level -> decide_receivers -> apply_mutes
    -> enqueue

The first two (alerting.model) give the incident's next state; `notify` chains the other four for
a stored incident. `record_outcome` runs them all around its store; `reconcile_mutes` replays
`notify` for a receiver whose mute ended. No stage reads or writes the database."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from alerting.decisions import LastNotice, decide
from alerting.model import PAGE_LINK, Incident, Notification, NotifyReason
from alerting.mutes import Mute, muted_because
from alerting.policy import EscalationPolicy
from checkers.levels import AlertLevel
from checkers.outcome import CheckOutcome


@dataclass(frozen=True)
class ReceiverThread:
    """What one receiver has of one incident: its latest sequence number and what it was last
    told (None while every notice to it was muted)."""

    receiver: str
    sequence: int = 0
    last: LastNotice | None = None


@dataclass(frozen=True)
class Decision:
    """One receiver's way through the stages: filled in stage by stage."""

    receiver: str
    thread: ReceiverThread | None  # None: no notification of this incident for it yet
    reason: NotifyReason | None = None  # None: nothing to tell it
    muted: str | None = None  # why a mute suppresses what it is told
    notification: Notification | None = None  # its outbox row, when there is one

    @property
    def suppressed(self) -> bool:
        return self.notification is not None and self.muted is not None


@dataclass(frozen=True)
class Notices:
    """What `notify` decided for one incident: the level its notifications carry, and one
    decision per receiver considered."""

    level: AlertLevel
    decisions: tuple[Decision, ...]

    @property
    def enqueued(self) -> list[Notification]:
        """The notifications to deliver (not muted), in receiver order."""
        return [d.notification for d in self.decisions if d.notification and not d.muted]

    @property
    def suppressed(self) -> dict[str, str]:
        """Receiver -> the mute that suppressed what it was told."""
        return {d.receiver: d.muted for d in self.decisions if d.suppressed and d.muted}


def effective_level(incident: Incident, policy: EscalationPolicy, now: dt.datetime) -> AlertLevel:
    """The level notifications carry: escalated by the policy while the incident is open, the
    incident's last level once it resolved. Acknowledged, it escalates no further: the level
    acknowledged, or the latest run's when the data itself rose above it."""
    if not incident.open:
        return incident.level
    if incident.acknowledged_level is not None:
        return max(incident.level, incident.acknowledged_level)
    return policy.effective_level(incident, now)


def decide_receivers(
    incident: Incident,
    level: AlertLevel,
    threads: Mapping[str, ReceiverThread],
    policy: EscalationPolicy,
    now: dt.datetime,
    *,
    receivers: Sequence[str] | None = None,
    replay: bool = False,
) -> tuple[Decision, ...]:
    """Whether and why each receiver is told: every routed receiver and every one with a thread
    of this incident (it hears the resolution), or `receivers` only. A replay never repeats: an
    unchanged incident waits for its next run's repeat; nor does an acknowledged incident."""
    names = receivers if receivers is not None else list(dict.fromkeys([*policy.routes, *threads]))
    decisions = []
    for name in names:
        thread = threads.get(name)
        lowest = policy.routes.get(name)
        reason = decide(
            incident,
            level,
            thread.last if thread else None,
            now,
            hears_level=lowest is not None and level >= lowest,
            repeat_every=None if replay or incident.acknowledged_by else policy.repeat_every,
        )
        decisions.append(Decision(name, thread, reason))
    return tuple(decisions)


def apply_mutes(
    decisions: Sequence[Decision],
    check: str,
    now: dt.datetime,
    mutes: Sequence[Mute],
    fingerprint: str = "",
) -> tuple[Decision, ...]:
    """Mark each decision with the first mute covering `check` (the incident's `fingerprint`)
    at `now`, if any. A muted notification is still written (suppressed), so a silence that
    ends can reconcile it."""
    muted = muted_because(check, now, mutes, fingerprint)
    return tuple(replace(d, muted=muted) for d in decisions)


def enqueue(
    decisions: Sequence[Decision],
    incident: Incident,
    level: AlertLevel,
    now: dt.datetime,
    *,
    outcome: CheckOutcome,
    links: Mapping[str, str] | None = None,
    page_url: str | None = None,
    note: str = "",
) -> tuple[Decision, ...]:
    """The notification of each decision with a reason, next in its receiver's thread. With
    `page_url` (DQ_SERVE_URL), the notifications link to the incident's page."""
    if incident.id is None:
        raise ValueError("enqueue needs a stored incident (one with an id)")
    links = dict(links or {})
    if page_url:
        links[PAGE_LINK] = incident_page(page_url, incident.id)
    enqueued = []
    for decision in decisions:
        if decision.reason is not None:
            notification = Notification(
                incident_id=incident.id,
                fingerprint=incident.fingerprint,
                receiver=decision.receiver,
                sequence=(decision.thread.sequence if decision.thread else 0) + 1,
                reason=decision.reason,
                level=level,
                incident_status=incident.status,
                failing_runs=incident.failing_runs,
                opened_at=incident.opened_at,
                created_at=now,
                outcome=outcome,
                links=dict(links),
                acknowledged_by=incident.acknowledged_by,
                note=note,
            )
            decision = replace(decision, notification=notification)
        enqueued.append(decision)
    return tuple(enqueued)


def notify(
    incident: Incident,
    threads: Mapping[str, ReceiverThread],
    policy: EscalationPolicy,
    now: dt.datetime,
    *,
    mutes: Sequence[Mute],
    outcome: CheckOutcome,
    links: Mapping[str, str] | None = None,
    receivers: Sequence[str] | None = None,
    replay: bool = False,
    page_url: str | None = None,
    note: str = "",
) -> Notices:
    """The stages after the incident is stored, in order: effective level, per-receiver
    decision, mutes, enqueue. `threads` are the incident's receiver threads by receiver."""
    level = effective_level(incident, policy, now)
    decisions = decide_receivers(
        incident, level, threads, policy, now, receivers=receivers, replay=replay
    )
    decisions = apply_mutes(decisions, incident.check, now, mutes, incident.fingerprint)
    enqueued = enqueue(
        decisions, incident, level, now, outcome=outcome, links=links, page_url=page_url, note=note
    )
    return Notices(level, enqueued)


def incident_page(base_url: str, incident_id: int) -> str:
    """The incident's page on `dq serve`: `{DQ_SERVE_URL}/incidents/{id}`."""
    return f"{base_url.rstrip('/')}/incidents/{incident_id}"


__all__ = [
    "Decision",
    "Notices",
    "ReceiverThread",
    "apply_mutes",
    "decide_receivers",
    "effective_level",
    "enqueue",
    "incident_page",
    "notify",
]
