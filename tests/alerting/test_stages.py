"""Each stage of the decision path on values alone (no database), and the chain they make."""

from __future__ import annotations

import ast
import dataclasses
import datetime as dt
from pathlib import Path

import pytest

from alerting import Alert, LastNotice, NotifyReason, Silence, stages, update_incident
from alerting.model import IncidentStatus
from alerting.mutes import MaintenanceWindow
from alerting.policy import EscalationPolicy
from alerting.stages import Decision, ReceiverThread
from checkers import AlertLevel
from tests.alerting.conftest import T0, outcome

W, E, C = AlertLevel.WARNING, AlertLevel.ERROR, AlertLevel.CRITICAL
HOUR = dt.timedelta(hours=1)
POLICY = EscalationPolicy(
    routes={"slack": W, "pagerduty": E}, escalate_after_runs=2, repeat_every=HOUR
)


def _incident(level: AlertLevel, *, runs: int = 1, resolved: bool = False, id: int | None = 7):
    incident, _ = update_incident(None, Alert.from_outcome(outcome(level)), T0)
    for _ in range(runs - 1):
        incident, _ = update_incident(incident, Alert.from_outcome(outcome(level)), T0)
    if resolved:
        incident, _ = update_incident(incident, Alert.from_outcome(outcome(None)), T0 + HOUR)
    return dataclasses.replace(incident, id=id)


def _told(receiver: str, level: AlertLevel, *, sequence: int = 1, at=T0) -> ReceiverThread:
    return ReceiverThread(receiver, sequence, LastNotice(level, NotifyReason.NEW, at))


def test_effective_level_escalates_open_incidents_only():
    assert stages.effective_level(_incident(W, runs=1), POLICY, T0) is W
    assert stages.effective_level(_incident(W, runs=3), POLICY, T0) is E  # one step per 2 more runs
    assert stages.effective_level(_incident(W, runs=5), POLICY, T0) is C
    assert stages.effective_level(_incident(W, runs=5, resolved=True), POLICY, T0) is W


def test_decide_receivers_asks_routes_then_threads_of_the_incident():
    threads = {"email": _told("email", W), "slack": _told("slack", W)}
    decisions = stages.decide_receivers(_incident(W), W, threads, POLICY, T0 + 2 * HOUR)
    assert [(d.receiver, d.reason) for d in decisions] == [
        ("slack", NotifyReason.REPEAT),  # told an hour or more ago
        ("pagerduty", None),  # routed from ERROR on
        ("email", None),  # no longer routed: hears the resolution only
    ]
    assert decisions[0].thread == threads["slack"] and decisions[1].thread is None
    resolved = stages.decide_receivers(
        _incident(W, resolved=True), W, threads, POLICY, T0 + 2 * HOUR
    )
    assert [d.reason for d in resolved] == [NotifyReason.RESOLVED, None, NotifyReason.RESOLVED]


def test_decide_receivers_raises_to_new_routes_and_replays_without_repeats():
    threads = {"slack": _told("slack", W)}
    raised = stages.decide_receivers(_incident(E), E, threads, POLICY, T0)
    assert [(d.receiver, d.reason) for d in raised] == [
        ("slack", NotifyReason.LEVEL_RAISED),
        ("pagerduty", NotifyReason.NEW),
    ]
    later = T0 + 2 * HOUR
    replayed = stages.decide_receivers(_incident(W), W, threads, POLICY, later, receivers=["slack"])
    assert [d.reason for d in replayed] == [NotifyReason.REPEAT]
    replayed = stages.decide_receivers(
        _incident(W), W, threads, POLICY, later, receivers=["slack"], replay=True
    )
    assert [(d.receiver, d.reason) for d in replayed] == [("slack", None)]


def test_apply_mutes_marks_every_decision_with_the_first_covering_mute():
    decisions = (Decision("slack", None, NotifyReason.NEW), Decision("pagerduty", None))
    silence = Silence("orders_*", T0, T0 + HOUR, "backfill")
    other = Silence("payments_*", T0, T0 + HOUR, "elsewhere")
    muted = stages.apply_mutes(decisions, "orders_have_customers", T0, [other, silence])
    assert [d.muted for d in muted] == [silence.mutes("orders_x", T0)] * 2
    assert [d.reason for d in muted] == [NotifyReason.NEW, None]
    assert all(
        d.muted is None for d in stages.apply_mutes(decisions, "orders_x", T0 + HOUR, [silence])
    )
    window = MaintenanceWindow("*", (T0.weekday(),), dt.time(5), 2 * HOUR)
    assert stages.apply_mutes(decisions, "any", T0, [window])[0].muted.startswith(
        "maintenance window"
    )


def test_enqueue_numbers_each_receivers_thread_and_skips_silent_decisions():
    incident = _incident(E, runs=2)
    decisions = (
        Decision("slack", _told("slack", W, sequence=4), NotifyReason.LEVEL_RAISED),
        Decision("pagerduty", None, NotifyReason.NEW, muted="silenced"),
        Decision("email", _told("email", W), None),
    )
    links = {"report": "https://dq.example/report"}
    slack, pagerduty, email = stages.enqueue(
        decisions, incident, C, T0 + HOUR, outcome=outcome(E), links=links
    )
    assert (slack.notification.sequence, pagerduty.notification.sequence) == (5, 1)
    assert email.notification is None and not email.suppressed
    assert pagerduty.suppressed and not slack.suppressed
    note = slack.notification
    assert (note.incident_id, note.fingerprint, note.receiver) == (7, incident.fingerprint, "slack")
    assert (note.reason, note.level, note.incident_status) == (
        NotifyReason.LEVEL_RAISED,
        C,
        IncidentStatus.OPEN,
    )
    assert (note.failing_runs, note.opened_at, note.created_at) == (2, T0, T0 + HOUR)
    assert note.links == links and note.links is not links
    assert note.dedup_key == f"{incident.fingerprint}:7:slack:5"
    with pytest.raises(ValueError, match="stored incident"):
        stages.enqueue(decisions, _incident(E, id=None), E, T0, outcome=outcome(E))


def test_notify_chains_the_stages_in_order():
    incident = _incident(W, runs=3)  # escalated to ERROR: pagerduty hears it too
    silence = Silence("orders_*", T0, T0 + HOUR, "backfill")
    notices = stages.notify(incident, {}, POLICY, T0, mutes=[], outcome=outcome(W))
    assert notices.level is E
    assert [(n.receiver, n.reason, n.level) for n in notices.enqueued] == [
        ("slack", NotifyReason.NEW, E),
        ("pagerduty", NotifyReason.NEW, E),
    ]
    assert notices.suppressed == {}
    muted = stages.notify(incident, {}, POLICY, T0, mutes=[silence], outcome=outcome(W))
    assert muted.enqueued == []
    assert muted.suppressed == dict.fromkeys(["slack", "pagerduty"], silence.mutes("orders_", T0))
    assert [d.notification for d in muted.decisions] == [
        d.notification for d in notices.decisions
    ]  # written all the same, as suppressed rows


def test_a_replay_decides_one_receiver_as_the_full_chain_would():
    """Reconciliation replays `notify` for one receiver: the same decision as a recording
    at that moment, except that it never repeats."""
    incident = _incident(W, runs=3, resolved=True)
    threads = {"slack": _told("slack", E, sequence=2), "pagerduty": _told("pagerduty", E)}
    later = T0 + 3 * HOUR
    full = stages.notify(incident, threads, POLICY, later, mutes=[], outcome=incident.last_outcome)
    for receiver in threads:
        replayed = stages.notify(
            incident,
            threads,
            POLICY,
            later,
            mutes=[],
            outcome=incident.last_outcome,
            receivers=[receiver],
            replay=True,
        )
        assert replayed.decisions == tuple(d for d in full.decisions if d.receiver == receiver)
        assert replayed.decisions[0].notification.reason is NotifyReason.RESOLVED


def test_stages_touch_no_database():
    source = Path(__file__).parents[2] / "alerting" / "stages.py"
    imported = set()
    for node in ast.walk(ast.parse(source.read_text())):
        if isinstance(node, ast.Import):
            imported |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            imported.add(node.module or "")
    assert not {m for m in imported if m.split(".")[0] == "sqlalchemy"}
    assert not imported & {"alerting.store", "alerting.tables", "alerting.pipeline"}
