"""Triage of incidents by people, from Slack, the CLI or the API: acknowledge, snooze, mark
expected; each recorded in the incident's event log (dq_incident_events) and told to the
receivers through the outbox. `incident_views` and `incident_events` read incidents back for
the pages, the API and `dq incident`."""

from alerting.triage.actions import acknowledge, duration_text, load_incident, mark_expected, snooze
from alerting.triage.events import incident_events
from alerting.triage.values import (
    ActionResult,
    Actor,
    IncidentEvent,
    IncidentView,
    UnknownIncident,
)
from alerting.triage.views import incident_view, incident_views

__all__ = [
    "ActionResult",
    "Actor",
    "IncidentEvent",
    "IncidentView",
    "UnknownIncident",
    "acknowledge",
    "duration_text",
    "incident_events",
    "incident_view",
    "incident_views",
    "load_incident",
    "mark_expected",
    "snooze",
]
