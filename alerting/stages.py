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
from alerting.model import Incident, Notification, NotifyReason
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
    incident's last level once it resolved."""
    return policy.effective_level(incident, now) if incident.open else incident.level


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
    unchanged incident waits for its next run's repeat."""
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
            repeat_every=None if replay else policy.repeat_every,
        )
        decisions.append(Decision(name, thread, reason))
    return tuple(decisions)


def apply_mutes(
    decisions: Sequence[Decision], check: str, now: dt.datetime, mutes: Sequence[Mute]
) -> tuple[Decision, ...]:
    """Mark each decision with the first mute covering `check` at `now`, if any. A muted
    notification is still written (suppressed), so a silence that ends can reconcile it."""
    muted = muted_because(check, now, mutes)
    return tuple(replace(d, muted=muted) for d in decisions)


def enqueue(
    decisions: Sequence[Decision],
    incident: Incident,
    level: AlertLevel,
    now: dt.datetime,
    *,
    outcome: CheckOutcome,
    links: Mapping[str, str] | None = None,
) -> tuple[Decision, ...]:
    """The notification of each decision with a reason, next in its receiver's thread."""
    if incident.id is None:
        raise ValueError("enqueue needs a stored incident (one with an id)")
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
                links=dict(links or {}),
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
) -> Notices:
    """The stages after the incident is stored, in order: effective level, per-receiver
    decision, mutes, enqueue. `threads` are the incident's receiver threads by receiver."""
    level = effective_level(incident, policy, now)
    decisions = decide_receivers(
        incident, level, threads, policy, now, receivers=receivers, replay=replay
    )
    decisions = apply_mutes(decisions, incident.check, now, mutes)
    return Notices(level, enqueue(decisions, incident, level, now, outcome=outcome, links=links))


__all__ = [
    "Decision",
    "Notices",
    "ReceiverThread",
    "apply_mutes",
    "decide_receivers",
    "effective_level",
    "enqueue",
    "notify",
]
