"""The live pages of `dq serve`, read-only, from the project database: the open incidents first
(level, check, owner, since, acknowledged by, snoozed until), then the HTML report's content
(scheduling.report: latest outcomes, plots, incident timelines, outcome history); an incident's
page with its event log (who did what, when, from where); a check's page. Every value is
escaped; no page loads anything from elsewhere (inline style, SVG and script only)."""

from __future__ import annotations

import dataclasses
import datetime as dt
import html
from urllib.parse import quote

from sqlalchemy.engine import Engine

from alerting.render import linkable
from alerting.triage import (
    IncidentEvent,
    IncidentView,
    incident_events,
    incident_view,
    incident_views,
)
from scheduling.report.data import load_histories
from scheduling.report.render import page, report_body
from scheduling.report.sections import when

__all__ = ["check_page", "incident_page", "incidents_json", "index_page"]

e = html.escape
TITLE = "dq-checkers: incidents"


def check_href(name: str) -> str:
    return "/checks/" + quote(name, safe="")


def _runbook(url: str | None) -> str:
    if not url or not linkable(url) or not url.startswith(("https://", "http://")):
        return e(url or "")
    return f'<a href="{e(url)}" rel="noopener noreferrer">runbook</a>'


def _incident_rows(views: list[IncidentView]) -> str:
    rows = []
    for view in views:
        acknowledged = (
            f"@{e(view.acknowledged_by)} at {e(when(view.acknowledged_at))}"
            if view.acknowledged_by
            else ""
        )
        rows.append(
            f'<tr data-incident="{view.id}"><td><a href="/incidents/{view.id}">{view.id}</a></td>'
            f'<td class="failed">{e(view.level.name)}</td>'
            f'<td><a href="{e(check_href(view.check))}">{e(view.check)}</a></td>'
            f"<td>{e(view.owner or '')}</td><td>{e(when(view.opened_at))}</td>"
            f'<td class="ack">{acknowledged}</td>'
            f'<td class="snooze">{e(when(view.snoozed_until))}</td>'
            f"<td>{_runbook(view.runbook)}</td></tr>"
        )
    return (
        "<style>#incidents td:nth-child(5),#incidents td:nth-child(7){white-space:nowrap}</style>"
        '<div class="wrap"><table id="incidents"><tr><th>incident</th><th>level</th>'
        "<th>check</th><th>owner</th><th>open since</th><th>acknowledged by</th>"
        "<th>snoozed until</th><th>runbook</th></tr>" + "".join(rows) + "</table></div>"
    )


def index_page(engine: Engine, *, now: dt.datetime) -> str:
    with engine.connect() as connection:
        views = incident_views(connection, now=now)
    checks = load_histories(engine, now=now)
    body, data = report_body(checks, base=None)
    head = (
        f"<h1>{TITLE}</h1><p class='muted'>Live from the project database at "
        f"{now:%Y-%m-%d %H:%M} UTC. Acknowledge, snooze or resolve from Slack or with "
        "<code>dq incident</code>.</p>"
        f"<h2>Open incidents ({len(views)})</h2>"
    )
    table = _incident_rows(views) if views else "<p>No open incident.</p>"
    return page(TITLE, head + table + body, data)


def _events(events: list[IncidentEvent]) -> str:
    if not events:
        return '<p class="muted">Nobody acted on it yet.</p>'
    items = "".join(
        f'<li class="{e(event.action)}">{e(when(event.at))}: {e(event.detail)} '
        f'<span class="muted">({e(event.action)} by @{e(event.actor_name)} from '
        f"{e(event.source)})</span></li>"
        for event in events
    )
    return f'<ol class="timeline" id="events">{items}</ol>'


def incident_page(engine: Engine, incident_id: int, *, now: dt.datetime) -> str:
    """Raises alerting.triage.UnknownIncident for an id no incident has."""
    with engine.connect() as connection:
        view = incident_view(connection, incident_id, now=now)
        events = incident_events(connection, incident_id)
    state = "open" if view.open else "resolved"
    if view.resolved_as:
        state += f" as {view.resolved_as}"
    meta = [
        ("check", f'<a href="{e(check_href(view.check))}">{e(view.check)}</a>'),
        ("state", e(state)),
        ("level", e(view.level.name)),
        ("owner", e(view.owner or "none")),
        ("open since", e(when(view.opened_at))),
        ("failing runs", str(view.failing_runs)),
        ("acknowledged by", e(f"@{view.acknowledged_by}" if view.acknowledged_by else "nobody")),
        ("snoozed until", e(when(view.snoozed_until) or "not snoozed")),
        ("PagerDuty dedup key", e(view.dedup_key)),
    ]
    if view.runbook:
        meta.append(("runbook", _runbook(view.runbook)))
    if view.resolution_note:
        meta.append(("resolution", e(view.resolution_note)))
    checks = [h for h in load_histories(engine, now=now) if h.name == view.check]
    body, data = report_body(checks, base=None)
    title = f"Incident {view.id}: {view.check}"
    return page(
        title,
        f'<p><a href="/">All incidents</a></p><h1>{e(title)}</h1><dl class="meta">'
        + "".join(f"<dt>{name}</dt><dd>{value}</dd>" for name, value in meta)
        + "</dl><h2>What people did</h2>"
        + _events(events)
        + body,
        data,
    )


def check_page(engine: Engine, name: str, *, now: dt.datetime) -> str | None:
    """None when no run of the check is recorded."""
    checks = [h for h in load_histories(engine, now=now) if h.name == name]
    if not checks:
        return None
    body, data = report_body(checks, base=None)
    return page(name, f'<p><a href="/">All incidents</a></p><h1>{e(name)}</h1>' + body, data)


def incidents_json(engine: Engine, *, now: dt.datetime, open_only: bool) -> list[dict[str, object]]:
    """Incidents for /api/incidents: every field of IncidentView; times ISO 8601, level by name."""
    with engine.connect() as connection:
        views = incident_views(connection, open_only=open_only, now=now)
    found = []
    for view in views:
        item: dict[str, object] = {}
        for field in dataclasses.fields(view):
            value = getattr(view, field.name)
            if isinstance(value, dt.datetime):
                value = value.isoformat()
            elif field.name == "level":
                value = value.name
            item[field.name] = value
        found.append(item)
    return found
