"""User-controlled text in notifications: Slack's notification `text` is mrkdwn like the blocks,
so mentions and disguised links are escaped there too; link URLs cannot break out of
`<url|label>`; email HTML and headers stay well-formed."""

from __future__ import annotations

import dataclasses
import json

from alerting import NotifyReason
from alerting.receivers import pagerduty_event, slack_calls
from checkers import Status
from tests.alerting.test_payloads import email_parts, matches_snapshot, notification

MENTION = "<!channel>"
DISGUISED = "<http://evil.example|click here>"
HOSTILE = f"{MENTION} {DISGUISED} & <@U123>"


def hostile_error():
    return notification(
        status=Status.ERROR,
        failing=0,
        unexcused=0,
        error=f"cast failed: {HOSTILE}",
        description=f"Why it matters: {HOSTILE}",
        failing_keys=(HOSTILE,),
        sample=({"note": HOSTILE},),
    )


def _texts(args: dict[str, object]) -> str:
    return json.dumps(args)


def test_slack_text_and_blocks_escape_mentions_and_disguised_links():
    thread = {"channel": "C0DQ", "ts": "1700000000.000001"}
    root = slack_calls(hostile_error(), {}, "C0DQ")
    reply, update = slack_calls(notification(NotifyReason.REPEAT, error=HOSTILE), thread, "C0DQ")
    for call in (*root, reply, update):
        text = str(call.args["text"])
        assert "<" not in text and ">" not in text, text
    assert root[0].args["text"] == (
        "[DQ] could not run (level ERROR): orders_have_customers: reason: cast failed: "
        "&lt;!channel&gt; &lt;http://evil.example|click here&gt; &amp; &lt;@U123&gt;"
    )
    everything = _texts(root[0].args)
    assert MENTION not in everything and DISGUISED not in everything and "<@U123" not in everything
    matches_snapshot("slack_hostile", [c.__dict__ for c in root])


def test_reply_text_escapes_keys_and_error():
    thread = {"channel": "C0DQ", "ts": "1700000000.000001"}
    n = notification(NotifyReason.LEVEL_RAISED, failing_keys=(HOSTILE,))
    reply = slack_calls(n, thread, "C0DQ")[0]
    assert "Failing keys: &lt;!channel&gt;" in str(reply.args["text"])


def test_link_urls_cannot_break_out_of_the_link():
    n = dataclasses.replace(
        notification(),
        links={
            "rows": "https://dq.example.com/rows/a|<!channel>/b c.jsonl?x=1&y=2",
            "label <!here>": "https://dq.example.com/ok",
            "trap": "javascript:alert(1)",
        },
    )
    blocks = slack_calls(n, {}, "C0DQ")[0].args["blocks"]
    [context] = next(b for b in blocks if b["type"] == "context")["elements"]  # type: ignore[union-attr]
    text = context["text"]
    assert "<https://dq.example.com/rows/a%7C%3C!channel%3E/b%20c.jsonl?x=1&amp;y=2|rows>" in text
    assert "<https://dq.example.com/ok|label &lt;!here&gt;>" in text
    assert "trap: javascript:alert(1)" in text and "<javascript:" not in text
    html_body = email_parts(n)["bodies"]["text/html"]  # type: ignore[index]
    assert "href='javascript:" not in html_body and "trap: javascript:alert(1)" in html_body
    assert "&lt;!channel&gt;" in html_body
    assert [link["text"] for link in pagerduty_event(n, "KEY")["links"]] == [  # type: ignore[union-attr]
        "label <!here>",
        "rows",
    ]


def test_email_subject_is_one_line_even_for_a_multi_line_error():
    n = notification(status=Status.ERROR, error="first line\nBcc: victim@example.com\r\nmore")
    headers = email_parts(n)["headers"]
    assert headers["Subject"].endswith("first line Bcc: victim@example.com more")  # type: ignore[index]


def test_formatting_marks_in_data_values_format_nothing():
    """`*_~` and the backtick at a word's edge would make Slack bold, italicise, strike or
    code part of a value: fenced by zero-width spaces, they show as written; marks inside a
    word (a check name) are left alone."""
    from alerting.receivers.slack import escape

    assert escape("orders_have_customers") == "orders_have_customers"
    fenced = escape("*all* ~gone~ _now_ `x`")
    assert fenced.replace("\u200b", "") == "*all* ~gone~ _now_ `x`"
    assert all(f"\u200b{mark}\u200b" in fenced for mark in "*~_`")
    n = notification(NotifyReason.NEW, error="value *bold* here", failing_keys=("_x_",))
    reply = slack_calls(n, {"channel": "C0DQ", "ts": "1.1"}, "C0DQ")[0]
    assert "*bold*" not in json.dumps(reply.args) and "_x_" not in str(reply.args["text"])
