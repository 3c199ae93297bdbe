"""What the report shows, read from the project database: each check's runs, its incidents as
timelines (opened, escalated, what people did to them, resolved) and the latest link to its
failing rows."""

from __future__ import annotations

import datetime as dt
import json
from collections import defaultdict
from dataclasses import dataclass

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from alerting.model import NotifyReason
from alerting.tables import incident_events, incidents, notifications, runs
from checkers.levels import AlertLevel
from checkers.outcome import CheckOutcome
from checkers.project_db import as_utc

FAILING_ROWS = "failing rows"


@dataclass(frozen=True)
class Run:
    at: dt.datetime  # the end of its window, else when it started
    outcome: CheckOutcome


@dataclass(frozen=True)
class IncidentEvent:
    at: dt.datetime
    what: str  # opened | escalated | lowered | resolved | person (a triage action)
    level: AlertLevel | None
    detail: str = ""  # a triage action in words: "Acknowledged by @ana, from slack"


@dataclass(frozen=True)
class IncidentStory:
    id: int
    open: bool
    level: AlertLevel  # of the latest failing run
    peak_level: AlertLevel
    effective_level: AlertLevel | None  # escalation included, when known
    failing_runs: int
    events: tuple[IncidentEvent, ...]


@dataclass(frozen=True)
class FailingRowsLink:
    url: str
    run_at: dt.datetime | None


@dataclass(frozen=True)
class CheckHistory:
    name: str
    runs: tuple[Run, ...]  # oldest first
    incidents: tuple[IncidentStory, ...]  # oldest first
    failing_rows: FailingRowsLink | None

    @property
    def latest(self) -> Run:
        return self.runs[-1]

    @property
    def open_incident(self) -> IncidentStory | None:
        return next((i for i in reversed(self.incidents) if i.open), None)


_CHANGES = {
    NotifyReason.NEW.value: "opened",
    NotifyReason.LEVEL_RAISED.value: "escalated",
    NotifyReason.LEVEL_LOWERED.value: "lowered",
}


def _level(value: object) -> AlertLevel | None:
    if value is None:
        return None
    return AlertLevel[value] if isinstance(value, str) else AlertLevel(int(value))  # type: ignore[call-overload]


def _notices(engine: Engine) -> tuple[dict[int, list[IncidentEvent]], dict[str, FailingRowsLink]]:
    """Level changes per incident (one per moment, however many receivers heard of it) and the
    latest failing-rows link per check."""
    changes: dict[int, dict[tuple[dt.datetime, str], IncidentEvent]] = defaultdict(dict)
    links: dict[str, FailingRowsLink] = {}
    query = sa.select(
        notifications.c.incident_id,
        notifications.c.reason,
        notifications.c.level,
        notifications.c.created_at,
        notifications.c.payload,
    ).order_by(notifications.c.id)
    with engine.connect() as connection:
        for incident_id, reason, level, created, payload in connection.execute(query):
            at = as_utc(created)
            assert at is not None
            if (what := _CHANGES.get(reason)) is not None:
                changes[incident_id].setdefault((at, what), IncidentEvent(at, what, _level(level)))
            data = json.loads(payload)
            if url := (data.get("links") or {}).get(FAILING_ROWS):
                outcome = data.get("outcome") or {}
                started = outcome.get("started_at")
                run_at = as_utc(dt.datetime.fromisoformat(started)) if started else None
                links[str(outcome.get("check"))] = FailingRowsLink(str(url), run_at)
    return {key: list(events.values()) for key, events in changes.items()}, links


def _actions(engine: Engine) -> dict[int, list[IncidentEvent]]:
    """What people did to each incident (acknowledge, snooze, expected), from its event log."""
    found: dict[int, list[IncidentEvent]] = defaultdict(list)
    t = incident_events
    query = sa.select(t.c.incident_id, t.c.at, t.c.detail, t.c.source).order_by(t.c.id)
    with engine.connect() as connection:
        for incident_id, at, detail, source in connection.execute(query):
            moment = as_utc(at)
            assert moment is not None
            found[incident_id].append(
                IncidentEvent(moment, "person", None, f"{detail}, from {source}")
            )
    return found


def _effective(stored: object, events: list[IncidentEvent]) -> AlertLevel | None:
    """The incident's `effective_level` column where the database has it, else the level its
    receivers last heard (escalation included)."""
    if stored is not None:
        return _level(stored)
    return next((event.level for event in reversed(events) if event.level is not None), None)


def _stories(
    engine: Engine, changes: dict[int, list[IncidentEvent]]
) -> dict[str, list[IncidentStory]]:
    stories: dict[str, list[IncidentStory]] = defaultdict(list)
    with engine.connect() as connection:
        rows = connection.execute(sa.select(incidents).order_by(incidents.c.opened_at)).all()
    actions = _actions(engine)
    for row in rows:
        record = row._mapping
        events = changes.get(record["id"], []) + actions.get(record["id"], [])
        opened = as_utc(record["opened_at"])
        assert opened is not None
        if not any(event.what == "opened" for event in events):
            events = [IncidentEvent(opened, "opened", None), *events]
        if (resolved := as_utc(record["resolved_at"])) is not None:
            events = [*events, IncidentEvent(resolved, "resolved", None)]
        stories[record["check_name"]].append(
            IncidentStory(
                id=record["id"],
                open=record["status"] == "open",
                level=AlertLevel(record["level"]),
                peak_level=AlertLevel(record["peak_level"]),
                effective_level=_effective(record.get("effective_level"), events),
                failing_runs=record["failing_runs"],
                events=tuple(sorted(events, key=lambda event: event.at)),
            )
        )
    return stories


def load_histories(engine: Engine, *, now: dt.datetime) -> list[CheckHistory]:
    """Every check with at least one recorded run, by name."""
    with engine.connect() as connection:
        rows = connection.execute(
            sa.select(
                runs.c.check_name, runs.c.outcome, runs.c.started_at, runs.c.window_end
            ).order_by(runs.c.id)
        ).all()
    per_check: dict[str, list[Run]] = defaultdict(list)
    for name, text, started, window_end in rows:
        at = as_utc(window_end) or as_utc(started) or now
        per_check[name].append(Run(at, CheckOutcome.from_json(text)))
    changes, links = _notices(engine)
    stories = _stories(engine, changes)
    return [
        CheckHistory(
            name,
            tuple(sorted(found, key=lambda run: run.at)),
            tuple(stories.get(name, ())),
            links.get(name),
        )
        for name, found in sorted(per_check.items())
    ]
