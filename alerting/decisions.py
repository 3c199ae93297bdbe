"""The notify decision: a pure function of (incident, what this receiver was last told, now)."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from alerting.model import Incident, NotifyReason
from checkers.levels import AlertLevel


@dataclass(frozen=True)
class LastNotice:
    """What a receiver was last told about an incident (None when nothing yet)."""

    level: AlertLevel
    reason: NotifyReason
    at: dt.datetime


def decide(
    incident: Incident,
    level: AlertLevel,
    last: LastNotice | None,
    now: dt.datetime,
    *,
    hears_level: bool,
    repeat_every: dt.timedelta | None,
) -> NotifyReason | None:
    """Whether to notify, and why. `level` is the effective (escalated) level; `hears_level`
    says whether the receiver's route covers it. A receiver that heard about an incident hears
    its resolution even when the level has since dropped below its route."""
    if not incident.open:
        told = last is not None and last.reason is not NotifyReason.RESOLVED
        return NotifyReason.RESOLVED if told else None
    if last is None or last.reason is NotifyReason.RESOLVED:
        return NotifyReason.NEW if hears_level else None
    if level > last.level:
        return NotifyReason.LEVEL_RAISED if hears_level else None
    if level < last.level:
        return NotifyReason.LEVEL_LOWERED
    if repeat_every is not None and now - last.at >= repeat_every and hears_level:
        return NotifyReason.REPEAT
    return None
