"""The pure stages: incidents and notify decisions."""

from __future__ import annotations

import datetime as dt

import pytest

from alerting import Alert, IncidentChange, LastNotice, NotifyReason, decide, update_incident
from checkers import AlertLevel
from tests.alerting.conftest import T0, outcome

W, E, C = AlertLevel.WARNING, AlertLevel.ERROR, AlertLevel.CRITICAL
HOUR = dt.timedelta(hours=1)


def test_incident_lifecycle():
    incident, change = update_incident(None, Alert.from_outcome(outcome(W)), T0)
    assert change is IncidentChange.OPENED and incident.failing_runs == 1
    incident, change = update_incident(incident, Alert.from_outcome(outcome(C)), T0 + HOUR)
    assert (change, incident.level, incident.peak_level) == (IncidentChange.UPDATED, C, C)
    incident, change = update_incident(incident, Alert.from_outcome(outcome(W)), T0 + 2 * HOUR)
    assert (incident.level, incident.peak_level, incident.failing_runs) == (W, C, 3)
    resolved, change = update_incident(incident, Alert.from_outcome(outcome(None)), T0 + 3 * HOUR)
    assert change is IncidentChange.RESOLVED and resolved.resolved_at == T0 + 3 * HOUR
    again, change = update_incident(resolved, Alert.from_outcome(outcome(E)), T0 + 4 * HOUR)
    assert change is IncidentChange.OPENED and again.opened_at == T0 + 4 * HOUR
    assert update_incident(None, Alert.from_outcome(outcome(None)), T0)[1] is IncidentChange.NONE


def test_error_outcomes_fire_and_tolerated_ones_do_not():
    from checkers import Status

    assert Alert.from_outcome(outcome(E, status=Status.ERROR, error="boom")).firing
    tolerated = Alert.from_outcome(outcome(W, status=Status.TOLERATED))
    assert not tolerated.firing and tolerated.level is AlertLevel.OK


def _incident(level: AlertLevel, *, resolved: bool = False):
    incident, _ = update_incident(None, Alert.from_outcome(outcome(level)), T0)
    if resolved:
        incident, _ = update_incident(incident, Alert.from_outcome(outcome(None)), T0 + HOUR)
    return incident


@pytest.mark.parametrize(
    ("level", "last", "hears", "repeat", "expected"),
    [
        (W, None, True, None, NotifyReason.NEW),
        (W, None, False, None, None),  # not routed at this level
        (E, LastNotice(W, NotifyReason.NEW, T0), True, None, NotifyReason.LEVEL_RAISED),
        (W, LastNotice(E, NotifyReason.NEW, T0), False, None, NotifyReason.LEVEL_LOWERED),
        (W, LastNotice(W, NotifyReason.NEW, T0), True, HOUR, None),  # repeat not yet due
        (W, LastNotice(W, NotifyReason.NEW, T0 - HOUR), True, HOUR, NotifyReason.REPEAT),
        (W, LastNotice(W, NotifyReason.NEW, T0 - HOUR), True, None, None),  # repeats off
        (W, LastNotice(W, NotifyReason.RESOLVED, T0 - HOUR), True, None, NotifyReason.NEW),
    ],
)
def test_decide_for_open_incidents(level, last, hears, repeat, expected):
    reason = decide(_incident(level), level, last, T0, hears_level=hears, repeat_every=repeat)
    assert reason is expected


def test_decide_resolution_only_for_receivers_that_were_told():
    resolved = _incident(W, resolved=True)
    told = LastNotice(E, NotifyReason.LEVEL_RAISED, T0)
    assert (
        decide(resolved, W, told, T0, hears_level=False, repeat_every=None) is NotifyReason.RESOLVED
    )
    assert decide(resolved, W, None, T0, hears_level=True, repeat_every=None) is None
    done = LastNotice(W, NotifyReason.RESOLVED, T0)
    assert decide(resolved, W, done, T0, hears_level=True, repeat_every=None) is None
