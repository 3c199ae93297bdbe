"""Triage actions against the loopback Slack and PagerDuty stand-ins, on SQLite and PostgreSQL:
acknowledge (thread reply, root edit, PagerDuty acknowledge with the incident's dedup_key, no
escalation over time afterwards, a rise by the data still notified), snooze (nothing during the
hour, the recovery after it), mark expected (resolved everywhere), idempotence by request key and
by state, an unknown incident; the event log and the incident views."""

from __future__ import annotations

import datetime as dt
import json
import threading

import pytest
import sqlalchemy as sa

from alerting import EscalationPolicy, deliver_pending, handle_outcome
from alerting.reconcile import reconcile_mutes
from alerting.tables import incidents, notifications
from alerting.triage import (
    Actor,
    UnknownIncident,
    acknowledge,
    incident_events,
    incident_views,
    mark_expected,
    snooze,
)
from checkers import AlertLevel
from scheduling.schema import project_database
from tests.alerting.conftest import T0, outcome
from tests.scheduling.databases import fresh_database

W, E, C = AlertLevel.WARNING, AlertLevel.ERROR, AlertLevel.CRITICAL
HOUR = dt.timedelta(hours=1)
#: Slack hears everything, PagerDuty ERROR and up; an hour open escalates one level.
POLICY = EscalationPolicy(
    routes={"slack": W, "pagerduty": E}, escalate_after=HOUR, repeat_every=dt.timedelta(0)
)
ANA = Actor("U024BE7LH", "ana", "slack")
BOB = Actor("bob", "bob", "cli")
KINDS = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]


@pytest.fixture(params=KINDS)
def db(request, tmp_path):
    with fresh_database(request.param, tmp_path) as url:
        engine = project_database(url)
        yield engine
        engine.dispose()


@pytest.fixture
def told(db, receivers):
    """An ERROR incident told to Slack (root message) and PagerDuty (trigger)."""
    recorded = handle_outcome(db, outcome(E), POLICY, T0)
    report = deliver_pending(db, receivers, T0)
    assert len(report.sent) == 2 and not report.pending
    return recorded.incident.id


def run(db, receivers, level, at):
    recorded = handle_outcome(db, outcome(level), POLICY, at)
    deliver_pending(db, receivers, at)
    return recorded


def outbox(db) -> list[tuple[str, str, str]]:
    with db.connect() as connection:
        rows = connection.execute(
            sa.select(
                notifications.c.receiver, notifications.c.reason, notifications.c.status
            ).order_by(notifications.c.id)
        )
        return [tuple(r) for r in rows]  # type: ignore[misc]


def test_acknowledge_tells_slack_and_pagerduty_and_stops_escalation(
    db, told, receivers, slack, pagerduty
):
    [root] = slack.roots()
    result = acknowledge(db, told, ANA, now=T0 + dt.timedelta(minutes=5), request_key="a1")
    assert (result.changed, result.action, result.message) == (
        True,
        "acknowledge",
        "Acknowledged by @ana",
    )
    deliver_pending(db, receivers, T0 + dt.timedelta(minutes=5))

    [reply] = slack.replies(root)
    assert "Acknowledged by @ana" in reply.text
    assert root.edits and "Acknowledged by @ana" in str(root.blocks)
    assert "acknowledge" not in [e.get("action_id") for e in _buttons(root)]  # done: no button
    trigger, ack = pagerduty.events
    assert (trigger["event_action"], ack["event_action"]) == ("trigger", "acknowledge")
    assert ack["dedup_key"] == trigger["dedup_key"] == incident_views_of(db)[0].dedup_key

    before = outbox(db)
    # three hours on, still ERROR: escalation over time would make it CRITICAL; acknowledged, no
    recorded = run(db, receivers, E, T0 + 3 * HOUR)
    assert recorded.enqueued == [] and outbox(db) == before
    assert incident_views_of(db)[0].level is E
    # the data itself rises to CRITICAL: that is still told
    raised = run(db, receivers, C, T0 + 4 * HOUR)
    assert [(n.receiver, n.reason.value, n.level) for n in raised.enqueued] == [
        ("slack", "level_raised", C),
        ("pagerduty", "level_raised", C),
    ]


def test_acknowledge_is_idempotent_by_request_key_and_by_state(db, told, receivers, slack):
    now = T0 + dt.timedelta(minutes=1)
    first = acknowledge(db, told, ANA, now=now, request_key="1700000000.1:U024BE7LH")
    retried = acknowledge(db, told, ANA, now=now, request_key="1700000000.1:U024BE7LH")
    second_click = acknowledge(db, told, BOB, now=now, request_key="1700000000.2:bob")
    assert first.changed and not retried.changed and not second_click.changed
    assert second_click.message == "Already acknowledged by @ana"
    deliver_pending(db, receivers, now)
    [root] = slack.roots()
    assert len(slack.replies(root)) == 1  # one reply, however many clicks
    with db.connect() as connection:
        events = incident_events(connection, told)
    assert [(e.action, e.actor_name, e.source) for e in events] == [("acknowledge", "ana", "slack")]


def test_an_unknown_incident_is_a_clear_error(db):
    with pytest.raises(UnknownIncident, match="no incident with id 4242"):
        acknowledge(db, 4242, ANA, now=T0)
    with pytest.raises(UnknownIncident):
        snooze(db, 4242, ANA, duration=HOUR, now=T0)
    with pytest.raises(UnknownIncident):
        mark_expected(db, 4242, ANA, now=T0)


def test_snooze_holds_notifications_for_the_hour_and_the_recovery_follows(
    db, told, receivers, slack, pagerduty
):
    [root] = slack.roots()
    at = T0 + dt.timedelta(minutes=10)
    result = snooze(db, told, ANA, duration=HOUR, now=at)
    assert result.changed and result.message.startswith("Snoozed for 1h by @ana (until ")
    assert not snooze(db, told, BOB, duration=HOUR, now=at + dt.timedelta(seconds=5)).changed
    assert incident_views_of(db, now=at)[0].snoozed_until == at + HOUR

    escalated = run(db, receivers, C, at + dt.timedelta(minutes=20))  # would be told: held back
    assert set(escalated.suppressed) == {"slack", "pagerduty"}
    recovered = run(db, receivers, None, at + dt.timedelta(minutes=40))  # passes: held back
    assert set(recovered.suppressed) == {"slack", "pagerduty"}
    [snoozed] = slack.replies(root)  # only the snooze's own line
    assert snoozed.text.startswith(":zzz: Snoozed for 1h by @ana (until ")
    assert len(pagerduty.events) == 1

    reconcile_mutes(db, lambda check: POLICY, at + dt.timedelta(minutes=61))
    deliver_pending(db, receivers, at + dt.timedelta(minutes=61))
    assert [e["event_action"] for e in pagerduty.events] == ["trigger", "resolve"]
    [_, reply] = slack.replies(root)
    assert "Resolved" in reply.text and root.text.startswith("[DQ] RESOLVED")


def test_a_snooze_posts_a_line_in_the_thread_and_leaves_root_and_page(
    db, told, receivers, slack, pagerduty
):
    [root] = slack.roots()
    at = T0 + dt.timedelta(minutes=10)
    snooze(db, told, ANA, duration=4 * HOUR, now=at)
    report = deliver_pending(db, receivers, at)
    assert not report.pending and not report.failed
    [line] = slack.replies(root)
    assert line.text == ":zzz: Snoozed for 4h by @ana (until 2026-11-22 10:10 UTC)"
    assert not line.reply_broadcast and not root.edits  # the root stays as it was
    assert [e["event_action"] for e in pagerduty.events] == ["trigger"]  # no PagerDuty event
    snooze(db, told, BOB, duration=4 * HOUR, now=at + dt.timedelta(seconds=5))  # a double click
    deliver_pending(db, receivers, at)
    assert len(slack.replies(root)) == 1


def test_a_muted_receiver_hears_the_acknowledgement_when_its_mute_ends(
    db, told, receivers, slack, pagerduty
):
    """Why a receiver whose latest notice a mute holds back gets no ack line meanwhile: the
    line would be the thread's latest notice, and reconciling (alerting.reconcile) finds what a
    mute held back by the thread's latest notice being suppressed; the escalation to CRITICAL
    held back here would be lost. It hears both, in order, when the mute ends."""
    [root] = slack.roots()
    at = T0 + dt.timedelta(minutes=10)
    snooze(db, told, BOB, duration=HOUR, now=at)
    run(db, receivers, C, at + dt.timedelta(minutes=5))  # CRITICAL, held back
    acknowledge(db, told, ANA, now=at + dt.timedelta(minutes=10))
    deliver_pending(db, receivers, at + dt.timedelta(minutes=10))
    assert [r.text.split()[0] for r in slack.replies(root)] == [":zzz:"]  # no ack line yet
    assert [e["event_action"] for e in pagerduty.events] == ["trigger"]

    later = at + dt.timedelta(minutes=61)
    reconcile_mutes(db, lambda check: POLICY, later)
    deliver_pending(db, receivers, later)
    [_, raised] = slack.replies(root)
    assert raised.text.startswith(":rotating_light: Escalated to CRITICAL")
    assert "Acknowledged by @ana" in json.dumps(root.edits[-1]["blocks"])
    assert [e["event_action"] for e in pagerduty.events] == ["trigger", "trigger"]


def test_a_snooze_mutes_only_its_incident(db, told, receivers):
    snooze(db, told, ANA, duration=HOUR, now=T0)
    other = handle_outcome(
        db, outcome(E, check="other_check"), POLICY, T0 + dt.timedelta(minutes=5)
    )
    assert other.suppressed == {} and {n.receiver for n in other.enqueued} == {"slack", "pagerduty"}


def test_mark_expected_resolves_the_incident_everywhere(db, told, receivers, slack, pagerduty):
    [root] = slack.roots()
    at = T0 + dt.timedelta(minutes=30)
    result = mark_expected(db, told, ANA, now=at, reason="the planned backfill")
    assert result.changed
    assert result.message.startswith("Marked expected by @ana: the planned backfill")
    deliver_pending(db, receivers, at)
    assert [e["event_action"] for e in pagerduty.events] == ["trigger", "resolve"]
    [reply] = slack.replies(root)
    assert "Marked expected by @ana: the planned backfill" in reply.text
    assert root.text.startswith("[DQ] RESOLVED") and not _buttons(root)

    again = mark_expected(db, told, BOB, now=at)
    assert not again.changed and again.message == f"Incident {told} is already resolved as expected"
    assert not acknowledge(db, told, BOB, now=at).changed
    with db.connect() as connection:
        [view] = incident_views(connection, open_only=False, now=at)
        assert incident_views(connection, now=at) == []
        [event] = incident_events(connection, told)
    assert (view.status, view.resolved_as, view.resolution_note) == (
        "resolved",
        "expected",
        "the planned backfill",
    )
    assert (event.action, event.actor_name, event.at) == ("expected", "ana", at)
    # the next failure opens a new incident, told afresh
    again_failing = run(db, receivers, E, at + HOUR)
    assert again_failing.incident.id != told and len(slack.roots()) == 2


def test_known_broken_for_needs_failing_keys(db, receivers):
    recorded = handle_outcome(db, outcome(E, failing_keys=()), POLICY, T0)
    with pytest.raises(ValueError, match="has no failing keys"):
        mark_expected(db, recorded.incident.id, ANA, now=T0, known_broken_for=HOUR)
    with db.connect() as connection:  # nothing changed
        assert connection.execute(sa.select(incidents.c.status)).scalar() == "open"


def test_incident_views_show_the_state_the_actions_left(db, told, receivers):
    at = T0 + dt.timedelta(minutes=2)
    acknowledge(db, told, ANA, now=at)
    snooze(db, told, ANA, duration=4 * HOUR, now=at)
    [view] = incident_views_of(db, now=at)
    assert (view.id, view.check, view.level, view.status, view.owner) == (
        told,
        "orders_have_customers",
        E,
        "open",
        "billing",
    )
    assert (view.acknowledged_by, view.acknowledged_at) == ("ana", at)
    assert view.snoozed_until == at + 4 * HOUR and view.resolved_as is None
    assert view.opened_at == T0 and view.dedup_key.startswith("dq-")
    with db.connect() as connection:
        events = incident_events(connection, told)
    assert [e.action for e in events] == ["acknowledge", "snooze"]
    assert events[1].detail.startswith("Snoozed for 4h by @ana")


def incident_views_of(db, now=None):
    with db.connect() as connection:
        return incident_views(connection, now=now or T0)


def _buttons(message) -> list[dict]:
    return [
        element
        for block in message.blocks
        if block.get("type") == "actions"
        for element in block.get("elements", [])
    ]


def test_two_clicks_at_once_acknowledge_once(db, told, receivers, slack):
    start = threading.Barrier(2)
    results = []

    def click(actor: Actor, key: str) -> None:
        start.wait(timeout=30)
        results.append(acknowledge(db, told, actor, now=T0 + HOUR / 2, request_key=key))

    threads = [
        threading.Thread(target=click, args=(ANA, "1.1:ana")),
        threading.Thread(target=click, args=(BOB, "1.2:bob")),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert sorted(r.changed for r in results) == [False, True]
    acks = [row for row in outbox(db) if row[1] == "acknowledged"]
    assert [receiver for receiver, *_ in acks] == ["pagerduty", "slack"]
    with db.connect() as connection:
        [event] = incident_events(connection, told)
    winner = next(r for r in results if r.changed)
    assert winner.message == f"Acknowledged by @{event.actor_name}"
