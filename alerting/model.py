"""The alerting data model: an alert per outcome, incidents that open, update, escalate and
resolve, and the receiver-agnostic notification that the outbox stores and receivers render."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from dataclasses import asdict, dataclass, field, fields, replace
from enum import StrEnum

from checkers.levels import AlertLevel
from checkers.outcome import CheckOutcome


def fingerprint(check: str, scope: str = "") -> str:
    """Stable identity of what is alerting: the check and its scope (a table, a partition...)."""
    return hashlib.sha256(f"{check}\x1f{scope}".encode()).hexdigest()[:32]


@dataclass(frozen=True)
class Alert:
    """One outcome as alerting sees it: firing (FAILED or ERROR) or not."""

    fingerprint: str
    check: str
    scope: str
    level: AlertLevel
    firing: bool
    outcome: CheckOutcome

    @classmethod
    def from_outcome(cls, outcome: CheckOutcome) -> Alert:
        return cls(
            fingerprint=fingerprint(outcome.check, outcome.scope),
            check=outcome.check,
            scope=outcome.scope,
            level=outcome.level if outcome.alerting else AlertLevel.OK,
            firing=outcome.alerting,
            outcome=outcome,
        )


class IncidentStatus(StrEnum):
    OPEN = "open"
    RESOLVED = "resolved"


@dataclass(frozen=True)
class Incident:
    """A run of failures of one fingerprint, from the first failing run to the first passing one."""

    fingerprint: str
    check: str
    scope: str
    status: IncidentStatus
    level: AlertLevel
    peak_level: AlertLevel
    failing_runs: int
    opened_at: dt.datetime
    updated_at: dt.datetime
    last_outcome: CheckOutcome
    resolved_at: dt.datetime | None = None
    id: int | None = None
    # triage: who acknowledged it (a name) and the level then; escalation stops there
    acknowledged_by: str | None = None
    acknowledged_level: AlertLevel | None = None

    @property
    def open(self) -> bool:
        return self.status is IncidentStatus.OPEN


class IncidentChange(StrEnum):
    OPENED = "opened"
    UPDATED = "updated"
    RESOLVED = "resolved"
    NONE = "none"  # passing, and nothing was open


def update_incident(
    current: Incident | None, alert: Alert, now: dt.datetime
) -> tuple[Incident | None, IncidentChange]:
    """The incident after this alert (pure): opens on the first failure, is updated by later
    ones, resolves when the check passes again."""
    if alert.firing:
        if current is None or not current.open:
            opened = Incident(
                fingerprint=alert.fingerprint,
                check=alert.check,
                scope=alert.scope,
                status=IncidentStatus.OPEN,
                level=alert.level,
                peak_level=alert.level,
                failing_runs=1,
                opened_at=now,
                updated_at=now,
                last_outcome=alert.outcome,
            )
            return opened, IncidentChange.OPENED
        updated = replace(
            current,
            level=alert.level,
            peak_level=max(current.peak_level, alert.level),
            failing_runs=current.failing_runs + 1,
            updated_at=now,
            last_outcome=alert.outcome,
        )
        return updated, IncidentChange.UPDATED
    if current is not None and current.open:
        resolved = replace(
            current,
            status=IncidentStatus.RESOLVED,
            updated_at=now,
            resolved_at=now,
            last_outcome=alert.outcome,
        )
        return resolved, IncidentChange.RESOLVED
    return current, IncidentChange.NONE


@dataclass(frozen=True)
class GroupMember:
    """One more incident on a group's root: a line with its level and link (alerting.grouping)."""

    check: str
    level: str
    incident_id: int
    headline: str
    link: str = ""


class NotifyReason(StrEnum):
    NEW = "new"
    LEVEL_RAISED = "level_raised"
    LEVEL_LOWERED = "level_lowered"
    REPEAT = "repeat"
    RESOLVED = "resolved"
    ACKNOWLEDGED = "acknowledged"  # someone acknowledged the incident (triage)
    SNOOZED = "snoozed"  # someone snoozed the incident (triage): a line in its threads
    ALSO_FAILING = "also_failing"  # a check this incident explains fails too (inhibition)


#: The key in Notification.links of the check's runbook (a link button in Slack).
RUNBOOK_LINK = "Runbook"
#: The key in Notification.links of the incident's page on `dq serve` (DQ_SERVE_URL).
PAGE_LINK = "Incident page"


@dataclass(frozen=True)
class Notification:
    """What one receiver is told about one incident at one moment. Stored in the outbox as JSON;
    receivers render it (with their thread state) when they deliver it."""

    incident_id: int
    fingerprint: str
    receiver: str
    sequence: int  # 1, 2, ... per (incident, receiver): delivery order
    reason: NotifyReason
    level: AlertLevel  # effective level (escalation included)
    incident_status: IncidentStatus
    failing_runs: int
    opened_at: dt.datetime
    created_at: dt.datetime
    outcome: CheckOutcome
    links: dict[str, str] = field(default_factory=dict)
    acknowledged_by: str | None = None  # shown on the incident's root message
    note: str = ""  # what a person did, for a human: "Acknowledged by @ana"
    #: The other incidents of its group, listed on the group's root (alerting.grouping)
    members: tuple[GroupMember, ...] = ()
    #: The group's first incident, whose threads carry this incident's notifications
    thread_incident_id: int | None = None
    thread_fingerprint: str | None = None
    #: The installation that recorded it (alerting.installation; "" before migration 13)
    installation: str = ""
    #: A resolve's: how many other incidents of its group's thread are still open
    group_open: int = 0

    @property
    def dedup_key(self) -> str:
        key = f"{self.fingerprint}:{self.incident_id}:{self.receiver}:{self.sequence}"
        return f"{self.installation}:{key}" if self.installation else key

    @property
    def resolved(self) -> bool:
        return self.reason is NotifyReason.RESOLVED

    def to_json(self) -> str:
        # field by field, not asdict: asdict deep-copies the outcome only for it to be replaced
        data = {f.name: getattr(self, f.name) for f in fields(self)}
        data["members"] = [asdict(m) for m in self.members]
        data["outcome"] = self.outcome.to_dict()
        data["level"] = self.level.name
        data["opened_at"] = self.opened_at.isoformat()
        data["created_at"] = self.created_at.isoformat()
        return json.dumps(data, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> Notification:
        data = json.loads(text)
        data["outcome"] = CheckOutcome.from_dict(data["outcome"])
        data["level"] = AlertLevel[data["level"]]
        data["reason"] = NotifyReason(data["reason"])
        data["incident_status"] = IncidentStatus(data["incident_status"])
        data["opened_at"] = dt.datetime.fromisoformat(data["opened_at"])
        data["created_at"] = dt.datetime.fromisoformat(data["created_at"])
        data["members"] = tuple(GroupMember(**m) for m in data.get("members") or ())
        return cls(**data)


__all__ = [
    "PAGE_LINK",
    "RUNBOOK_LINK",
    "Alert",
    "GroupMember",
    "Incident",
    "IncidentChange",
    "IncidentStatus",
    "Notification",
    "NotifyReason",
    "fingerprint",
    "update_incident",
]
