"""Inhibition (Alertmanager's inhibit_rules): while a check that declares `inhibits = True` has an
open incident, the failures of other checks over the same source are explained by it. Their
incidents are recorded, their notifications written as suppressed (`inhibited: ...`) and listed
in the inhibitor's thread; they are decided again on their next run once the inhibitor resolved.
The stage is pure: the rule comes from the checks' sources (scheduling), the open incidents from
the store."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from alerting.model import Incident
from alerting.stages import Decision
from checkers.levels import AlertLevel

#: The start of the reason stored on a notification that an inhibition holds back.
INHIBITED = "inhibited"


@dataclass(frozen=True)
class Inhibitor:
    """A check whose open incident explains failures over `source` (a label for people)."""

    check: str
    source: str


@dataclass(frozen=True)
class InhibitRule:
    """Which checks may explain one check's failures. `explains_all`: every source the check
    reads is one of theirs; only then may a CRITICAL be inhibited."""

    inhibitors: tuple[Inhibitor, ...]
    explains_all: bool


@dataclass(frozen=True)
class Inhibition:
    """The open incident explaining a failure, and the source they share."""

    incident: Incident
    source: str

    @property
    def reason(self) -> str:
        return (
            f"{INHIBITED}: probably because {self.source} is late "
            f"({self.incident.check}, incident {self.incident.id})"
        )

    def also_failing(self, incident: Incident, level: AlertLevel) -> str:
        """The line the inhibitor's thread gets."""
        return (
            f"Also failing, probably because {self.source} is late: {incident.check} ({level.name})"
        )


def inhibition_of(
    incident: Incident,
    level: AlertLevel,
    rule: InhibitRule | None,
    open_incidents: Mapping[str, Incident],
) -> Inhibition | None:
    """The inhibition holding back `incident`'s notifications at `level`, if any: the earliest
    opened incident of one of its inhibitors (the one whose thread was told: a later inhibitor
    over the same source is itself inhibited by it). None for a resolved incident, an inhibitor's
    own, and a CRITICAL over a source no open inhibitor explains."""
    if rule is None or not incident.open:
        return None
    if level is AlertLevel.CRITICAL and not rule.explains_all:
        return None
    found = [
        (open_incidents[i.check], i.source)
        for i in rule.inhibitors
        if i.check != incident.check and i.check in open_incidents
    ]
    found = [(other, source) for other, source in found if other.id != incident.id]
    if not found:
        return None
    other, source = min(found, key=lambda pair: (pair[0].opened_at, pair[0].id or 0))
    return Inhibition(other, source)


def inhibit(decisions: Sequence[Decision], inhibition: Inhibition | None) -> tuple[Decision, ...]:
    """Mark each decision with a reason to tell as held back by `inhibition` (written as
    suppressed, so it is recorded and not counted as told)."""
    if inhibition is None:
        return tuple(decisions)
    return tuple(
        replace(d, muted=d.muted or inhibition.reason) if d.reason is not None else d
        for d in decisions
    )


def inhibited(reason: str | None) -> bool:
    """Whether a suppressed row's reason is an inhibition (not a mute)."""
    return bool(reason) and str(reason).startswith(f"{INHIBITED}:")


__all__ = [
    "INHIBITED",
    "InhibitRule",
    "Inhibition",
    "Inhibitor",
    "inhibit",
    "inhibited",
    "inhibition_of",
]
