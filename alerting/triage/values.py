"""The values of triage: who acted, what an action did, an incident as people see it and one
entry of its timeline."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from checkers.levels import AlertLevel

SOURCES = ("slack", "cli", "api")
ACTIONS = ("acknowledge", "snooze", "expected", "retry")


class UnknownIncident(LookupError):
    """No incident has this id."""

    def __init__(self, incident_id: int) -> None:
        super().__init__(f"no incident with id {incident_id}; `dq incident list` shows them")
        self.incident_id = incident_id


@dataclass(frozen=True)
class Actor:
    """Who acted: a Slack user (id and name), or the OS user for the CLI."""

    id: str
    name: str
    source: str  # slack | cli | api

    def __post_init__(self) -> None:
        if self.source not in SOURCES:
            raise ValueError(f"actor source {self.source!r} is not one of {', '.join(SOURCES)}")
        if not self.id.strip() or not self.name.strip():
            raise ValueError("an actor needs an id and a name")

    @property
    def handle(self) -> str:
        return f"@{self.name}"


@dataclass(frozen=True)
class ActionResult:
    """What an action did; `changed` is False when it was already applied (a repeat)."""

    incident_id: int
    action: str  # acknowledge | snooze | expected
    changed: bool
    message: str  # one line for a human


@dataclass(frozen=True)
class IncidentView:
    """An incident as the pages, the API and `dq incident` show it. `level` is the level its
    notifications carry (escalation included); `dedup_key` is PagerDuty's."""

    id: int
    check: str
    scope: str
    fingerprint: str
    level: AlertLevel
    status: str  # open | resolved
    owner: str | None
    opened_at: dt.datetime
    updated_at: dt.datetime
    resolved_at: dt.datetime | None
    failing_runs: int
    acknowledged_by: str | None
    acknowledged_at: dt.datetime | None
    snoozed_until: dt.datetime | None
    resolved_as: str | None  # "expected" when a person resolved it so
    resolution_note: str | None
    runbook: str | None
    dedup_key: str

    @property
    def open(self) -> bool:
        return self.status == "open"


@dataclass(frozen=True)
class IncidentEvent:
    """One thing a person did to an incident."""

    id: int
    incident_id: int
    at: dt.datetime
    actor_id: str
    actor_name: str
    source: str
    action: str
    detail: str
