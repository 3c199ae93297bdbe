"""Payload builders against stored snapshots (set DQ_UPDATE_SNAPSHOTS=1 to rewrite them after an
intended change), and escaping of user text in Slack mrkdwn and HTML."""

from __future__ import annotations

import datetime as dt
import json
import os
from dataclasses import replace
from pathlib import Path

import pytest

from alerting import IncidentStatus, Notification, NotifyReason
from alerting.grouping import with_member
from alerting.model import PAGE_LINK
from alerting.receivers import build_email, pagerduty_event, slack_calls
from checkers import AlertLevel, FailingElementsThresholds
from checkers.levels import level_reason
from tests.alerting.conftest import T0, outcome

SNAPSHOTS = Path(__file__).parent / "snapshots"


def notification(
    reason: NotifyReason = NotifyReason.NEW, **outcome_changes: object
) -> Notification:
    resolved = reason is NotifyReason.RESOLVED
    return Notification(
        incident_id=42,
        fingerprint="0123456789abcdef0123456789abcdef",
        receiver="slack",
        sequence=1 if reason is NotifyReason.NEW else 3,
        reason=reason,
        level=AlertLevel.ERROR,
        incident_status=IncidentStatus.RESOLVED if resolved else IncidentStatus.OPEN,
        failing_runs=3,
        opened_at=T0,
        created_at=T0 + dt.timedelta(minutes=30),
        outcome=outcome(None if resolved else AlertLevel.ERROR, **outcome_changes),
        links={"failing rows": "https://dq.example.com/rows/orders.jsonl"},
    )


def matches_snapshot(name: str, value: object) -> None:
    path = SNAPSHOTS / f"{name}.json"
    text = json.dumps(value, indent=2, sort_keys=True, default=str) + "\n"
    if os.environ.get("DQ_UPDATE_SNAPSHOTS") == "1":
        path.write_text(text)
    assert path.exists(), f"no snapshot {path.name}: run with DQ_UPDATE_SNAPSHOTS=1 once"
    assert text == path.read_text()


def email_parts(n: Notification) -> dict[str, object]:
    msg = build_email(
        n, sender="dq@example.com", recipients=["a@example.com"], domain="example.com"
    )
    bodies = {p.get_content_type(): p.get_content() for p in msg.walk() if not p.is_multipart()}
    headers = {
        k: msg[k]
        for k in ("Subject", "From", "To", "Date", "Message-ID", "In-Reply-To", "References")
    }
    return {"headers": headers, "bodies": bodies}


def test_slack_snapshots():
    thread = {"channel": "C0DQ", "ts": "1700000000.000001"}
    matches_snapshot("slack_new", [c.__dict__ for c in slack_calls(notification(), {}, "C0DQ")])
    raised = slack_calls(notification(NotifyReason.LEVEL_RAISED), thread, "C0DQ")
    matches_snapshot("slack_level_raised", [c.__dict__ for c in raised])
    resolved = slack_calls(notification(NotifyReason.RESOLVED), thread, "C0DQ")
    matches_snapshot("slack_resolved", [c.__dict__ for c in resolved])


def test_pagerduty_snapshots():
    matches_snapshot("pagerduty_trigger", pagerduty_event(notification(), "ROUTINGKEY"))
    matches_snapshot(
        "pagerduty_resolve", pagerduty_event(notification(NotifyReason.RESOLVED), "ROUTINGKEY")
    )


def test_email_snapshots():
    matches_snapshot("email_new", email_parts(notification()))
    matches_snapshot("email_repeat", email_parts(notification(NotifyReason.REPEAT)))


@pytest.mark.parametrize("field", ["description", "sample"])
def test_user_text_is_escaped(field):
    hostile = "<script>alert(1)</script> & <@U123|everyone>"
    changes = (
        {"description": hostile} if field == "description" else {"sample": ({"note": hostile},)}
    )
    n = notification(**changes)
    slack_text = json.dumps([c.args for c in slack_calls(n, {}, "C0DQ")])
    assert "<script>" not in slack_text and "<@U123" not in slack_text
    assert "&lt;script&gt;" in slack_text and "&amp;" in slack_text
    html_body = email_parts(n)["bodies"]["text/html"]  # type: ignore[index]
    assert "<script>" not in html_body and "&lt;script&gt;" in html_body


def test_payloads_respect_slack_limits():
    long = notification(description="x" * 5000, sample=tuple({"c": "y" * 500} for _ in range(50)))
    root = slack_calls(long, {}, "C0DQ")[0].args
    for block in root["blocks"]:  # type: ignore[union-attr]
        text = block.get("text", {}).get("text", "") if isinstance(block.get("text"), dict) else ""
        assert len(text) <= 3000
    assert len(root["blocks"]) <= 50  # type: ignore[arg-type]


def escalated_with_excused_keys(reason: NotifyReason = NotifyReason.LEVEL_RAISED) -> Notification:
    """2,310 unknown tail numbers of 336,776 flights, 1,204 excused: the run's level WARNING,
    escalated to CRITICAL; 721 distinct keys fail, 100 listed."""
    run = outcome(
        AlertLevel.WARNING,
        check="flight_planes_known",
        failing=2310,
        unexcused=1106,
        total=336776,
        failing_keys=tuple(f"N{i:03d}" for i in range(100)),
        failing_keys_distinct=721,
        tolerance="no failures outside known-broken keys",
        level_reason=level_reason(
            FailingElementsThresholds(warning=2000, error=5000), 1106, 336776
        ),
    )
    n = notification(reason)
    return replace(n, level=AlertLevel.CRITICAL, failing_runs=9, outcome=run)


def test_excused_rows_distinct_keys_and_escalation_snapshots():
    n = escalated_with_excused_keys()
    matches_snapshot("email_escalated_excused_keys", email_parts(n))
    thread = {"channel": "C0DQ", "ts": "1700000000.000001"}
    matches_snapshot(
        "slack_escalated_excused_keys", [c.__dict__ for c in slack_calls(n, thread, "C0DQ")]
    )
    text = email_parts(n)["bodies"]["text/plain"]  # type: ignore[index]
    assert (
        "2,310 of 336,776 elements failing (0.69%), 1,204 of them excused by known-broken keys; "
        "judged on the 1,106 unexcused (0.33%)"
    ) in text
    assert "Level: CRITICAL (escalated from WARNING)" in text
    assert "Level set by: WARNING: 1,106 failing <= warning threshold 2,000" in text
    assert "Failing keys: 721 distinct keys (first 100 listed): N000, N001," in text
    event = pagerduty_event(n, "ROUTINGKEY")["payload"]["custom_details"]  # type: ignore[index]
    assert (event["failing_keys_distinct"], event["excused"]) == (721, 1204)
    assert event["level_reason"] == "WARNING: 1,106 failing <= warning threshold 2,000"


def test_failing_keys_described_against_the_list():
    def described(**changes: object) -> str:
        return outcome(AlertLevel.ERROR, **changes).describe_failing_keys()

    hundred = tuple(range(100))
    assert described() == ""  # no count: nothing claimed
    assert described(failing_keys=(7,), failing_keys_distinct=1) == "1 distinct key"
    assert described(failing_keys=hundred, failing_keys_distinct=721) == (
        "721 distinct keys (first 100 listed)"
    )
    assert described(
        failing_keys=hundred, failing_keys_distinct=7059, failing_keys_approximate=True
    ) == ("about 7,059 distinct keys (estimated; first 100 listed)")
    assert described(failing_keys=(), failing_keys_distinct=12) == "12 distinct keys (not listed)"


def _actions(blocks: object) -> dict[str, dict]:
    """action_id -> element of the message's actions blocks."""
    return {
        element["action_id"]: element
        for block in blocks  # type: ignore[attr-defined]
        if block["type"] == "actions"
        for element in block["elements"]
    }


def test_triage_buttons_snapshots():
    with_runbook = replace(
        notification(), links={**notification().links, "Runbook": "https://wiki.example.com/rb"}
    )
    [root] = slack_calls(with_runbook, {}, "C0DQ")
    matches_snapshot("slack_new_with_runbook", root.__dict__)
    buttons = _actions(root.args["blocks"])
    assert list(buttons) == ["acknowledge", "snooze", "expected", "runbook"]
    assert buttons["acknowledge"]["value"] == buttons["expected"]["value"] == "42"
    assert [o["value"] for o in buttons["snooze"]["options"]] == [
        "42:1h",
        "42:4h",
        "42:24h",
        "42:7d",
    ]
    assert buttons["runbook"]["url"] == "https://wiki.example.com/rb"
    assert "Runbook" not in json.dumps(root.args["blocks"][:-1])  # a button, not a context link
    assert list(_actions(slack_calls(notification(), {}, "C0DQ")[0].args["blocks"])) == [
        "acknowledge",
        "snooze",
        "expected",
    ]  # no runbook declared: no runbook button


def test_the_level_raising_reply_carries_the_buttons_and_a_resolution_none():
    thread = {"channel": "C0DQ", "ts": "1700000000.000001"}
    reply, edit = slack_calls(notification(NotifyReason.LEVEL_RAISED), thread, "C0DQ")
    assert list(_actions(reply.args["blocks"])) == ["acknowledge", "snooze", "expected"]
    assert list(_actions(edit.args["blocks"])) == ["acknowledge", "snooze", "expected"]
    repeat, _ = slack_calls(notification(NotifyReason.REPEAT), thread, "C0DQ")
    assert "blocks" not in repeat.args
    for call in slack_calls(notification(NotifyReason.RESOLVED), thread, "C0DQ"):
        assert _actions(call.args.get("blocks", [])) == {}


def test_an_acknowledgement_replies_edits_the_root_and_acknowledges_pagerduty():
    thread = {"channel": "C0DQ", "ts": "1700000000.000001"}
    n = replace(
        notification(NotifyReason.ACKNOWLEDGED),
        acknowledged_by="ana <b>",
        note="Acknowledged by @ana <b>",
    )
    reply, edit = slack_calls(n, thread, "C0DQ")
    assert reply.args["text"] == ":eyes: Acknowledged by @ana &lt;b&gt;"
    assert ":eyes: Acknowledged by @ana &lt;b&gt;" in json.dumps(edit.args["blocks"])
    assert list(_actions(edit.args["blocks"])) == ["snooze", "expected"]  # acknowledged already
    matches_snapshot("pagerduty_acknowledge", pagerduty_event(n, "ROUTINGKEY"))


def test_button_values_read_back():
    from alerting.receivers.slack_actions import parse_snooze, parse_value

    assert parse_value("42") == 42
    assert parse_snooze("42:24h") == (42, dt.timedelta(hours=24))
    assert parse_snooze("7:7d") == (7, dt.timedelta(days=7))
    for bad in ("42:3h", "x:1h", "42"):
        with pytest.raises(ValueError):
            parse_snooze(bad)
    with pytest.raises(ValueError):
        parse_value("-1")


def test_email_tells_an_acknowledgement_and_a_resolution_as_expected():
    ack = replace(
        notification(NotifyReason.ACKNOWLEDGED), acknowledged_by="ana", note="Acknowledged by @ana"
    )
    subject = email_parts(ack)["headers"]["Subject"]  # type: ignore[index]
    assert subject.endswith("- Acknowledged by @ana: 3 of 120 elements failing (2.50%)")
    expected = replace(
        notification(NotifyReason.RESOLVED), note="Marked expected by @ana: the backfill"
    )
    text = email_parts(expected)["bodies"]["text/plain"]  # type: ignore[index]
    assert text.startswith("Resolved: Marked expected by @ana: the backfill.")
    assert pagerduty_event(expected, "KEY")["event_action"] == "resolve"


def test_a_group_root_lists_its_members_and_a_member_replies_in_the_thread_only():
    member = replace(
        notification(check="orders_<!channel>"),
        incident_id=43,
        level=AlertLevel.CRITICAL,
        links={PAGE_LINK: "https://dq.example.com/incidents/43"},
    )
    root = with_member(notification(), member, "3 of 120 elements failing")
    assert root.level is AlertLevel.CRITICAL and Notification.from_json(root.to_json()) == root
    [post] = slack_calls(root, {}, "C1")
    listed = json.dumps(post.args["blocks"])
    assert "Also opened in this run (1)" in listed and "&lt;!channel&gt;" in listed
    assert "<!channel>" not in listed and "incidents/43|incident" in listed
    assert "(+1 more opened in this run)" in str(post.args["text"])
    mail = build_email(root, sender="dq@example.com", recipients=["a@b.c"], domain="example.com")
    assert "orders_<!channel>: 3 of 120 elements failing" in mail.get_body(("plain",)).get_content()
    assert pagerduty_event(root, "KEY")["payload"]["severity"] == "critical"  # type: ignore[index]

    resolved = replace(
        notification(NotifyReason.RESOLVED),
        thread_incident_id=41,
        thread_fingerprint="f" * 32,
    )
    [reply] = slack_calls(resolved, {"channel": "C1", "ts": "1.1"}, "C1")  # no root edit
    assert reply.args["thread_ts"] == "1.1" and str(reply.args["text"]).startswith("orders_have")
    threaded = build_email(resolved, sender="dq@example.com", recipients=["a@b.c"], domain="x")
    assert threaded["In-Reply-To"] == f"<dq.{'f' * 16}.41.1@x>"


def test_an_outcome_built_by_hand_excuses_nothing():
    """docs/alerting.md builds outcomes without `unexcused`: every failing element is then
    unexcused (it defaulted to 0, and the alert said "judged on the 0 unexcused")."""
    from alerting.render import counts
    from checkers import CheckOutcome, Status

    by_hand = CheckOutcome(
        "orders_have_amounts", Status.FAILED, AlertLevel.ERROR, failing=3, total=40
    )
    assert (by_hand.unexcused, by_hand.excused) == (3, 0)
    assert counts(by_hand) == "3 of 40 elements failing (7.50%)"
    excusing = replace(by_hand, unexcused=1)
    assert counts(excusing).endswith(
        "2 of them excused by known-broken keys; judged on the 1 unexcused (2.50%)"
    )
    assert CheckOutcome.from_dict(excusing.to_dict()) == excusing
