"""Acceptance scenarios against real servers on loopback: a check fails three runs (WARNING,
WARNING, ERROR) and passes; Slack is down for a run; Slack rate-limits; an edit fails."""

from __future__ import annotations

import datetime as dt
import logging

import sqlalchemy as sa

from alerting.delivery import RetryPolicy, deliver_pending
from alerting.pipeline import handle_outcome
from alerting.policy import EscalationPolicy
from alerting.tables import incidents, notifications
from checkers import AlertLevel
from tests.alerting.conftest import PAGERDUTY_KEY, SLACK_TOKEN, T0, outcome

POLICY = EscalationPolicy(
    routes={
        "slack": AlertLevel.WARNING,
        "email": AlertLevel.WARNING,
        "pagerduty": AlertLevel.ERROR,
    },
    repeat_every=dt.timedelta(0),
)
RUNS = [AlertLevel.WARNING, AlertLevel.WARNING, AlertLevel.ERROR, None]


class Sleeps(list):
    def __call__(self, seconds: float) -> None:
        self.append(seconds)


def run(engine, receivers, level, index, sleep=None):
    now = T0 + dt.timedelta(minutes=15 * index)
    handle_outcome(engine, outcome(level), POLICY, now)
    return deliver_pending(
        engine,
        receivers,
        now,
        sleep=Sleeps() if sleep is None else sleep,
        retry=RetryPolicy(),
    )


def test_three_failing_runs_then_recovery(engine, receivers, slack, pagerduty, smtp, caplog):
    caplog.set_level(logging.DEBUG)
    for index, level in enumerate(RUNS):
        report = run(engine, receivers, level, index)
        assert not report.pending and not report.failed

    [root] = slack.roots()
    replies = slack.replies(root)
    assert [r.reply_broadcast for r in replies] == [False, True, False]
    assert "Still failing (run 2)" in replies[0].text
    assert "Escalated to ERROR" in replies[1].text
    assert "Resolved" in replies[2].text
    assert root.text.startswith("[DQ] RESOLVED") and len(root.edits) == 3
    assert root.blocks[0]["text"]["text"] == "[DQ] RESOLVED: orders_have_customers"

    actions = [(e["event_action"], e["dedup_key"]) for e in pagerduty.events]
    assert [a for a, _ in actions] == ["trigger", "resolve"]
    assert actions[0][1] == actions[1][1]
    assert pagerduty.events[0]["payload"]["severity"] == "error"

    _, mailbox = smtp
    mails = mailbox.messages
    assert len(mails) == 4 and all(mailbox.tls)
    first = mails[0]["Message-ID"]
    assert all(m["In-Reply-To"] == first and m["References"] == first for m in mails[1:])
    assert "[DQ] RESOLVED" in mails[3]["Subject"]
    assert {p.get_content_type() for p in mails[0].walk()} >= {"text/plain", "text/html"}

    with engine.connect() as connection:
        [incident] = connection.execute(sa.select(incidents)).mappings()
        statuses = connection.execute(sa.select(notifications.c.status)).scalars().all()
    assert (incident["status"], incident["failing_runs"], incident["peak_level"]) == (
        "resolved",
        3,
        AlertLevel.ERROR,
    )
    assert set(statuses) == {"sent"} and len(statuses) == 4 + 4 + 2
    assert SLACK_TOKEN not in caplog.text and PAGERDUTY_KEY not in caplog.text


def test_slack_down_for_a_run_loses_nothing_and_keeps_order(engine, receivers, slack):
    run(engine, receivers, AlertLevel.WARNING, 0)
    slack.down = True
    report = run(engine, receivers, AlertLevel.WARNING, 1)
    assert len(report.pending) == 1 and not report.failed  # email still went out
    slack.down = False
    run(engine, receivers, AlertLevel.ERROR, 2)
    [root] = slack.roots()
    replies = slack.replies(root)
    assert [
        "Still failing (run 2)" in replies[0].text,
        "Escalated to ERROR" in replies[1].text,
    ] == [True, True]
    assert len(replies) == 2 and len(slack.messages) == 3  # each pending message exactly once


def test_rate_limit_retry_after_is_honoured(engine, receivers, slack):
    slack.faults.append((429, "1"))  # short: waited once within the run
    sleeps = Sleeps()
    report = run(engine, receivers, AlertLevel.WARNING, 0, sleep=sleeps)
    assert sleeps == [1.0] and not report.pending
    assert len(slack.roots()) == 1


def test_a_long_retry_after_defers_to_the_tick_it_names(engine, receivers, slack):
    slack.faults.append((429, "7"))
    sleeps = Sleeps()
    report = run(engine, receivers, AlertLevel.WARNING, 0, sleep=sleeps)
    assert sleeps == [] and len(report.pending) == 1  # not waited on: deferred
    early = deliver_pending(engine, receivers, T0 + dt.timedelta(seconds=6), sleep=sleeps)
    assert len(early.pending) == 1 and not slack.messages
    later = deliver_pending(engine, receivers, T0 + dt.timedelta(seconds=8), sleep=sleeps)
    assert not later.pending and len(slack.roots()) == 1


def test_a_failed_edit_is_retried_without_reposting_the_reply(engine, receivers, slack):
    run(engine, receivers, AlertLevel.WARNING, 0)
    handle_outcome(engine, outcome(AlertLevel.ERROR), POLICY, T0 + dt.timedelta(minutes=15))
    original = slack.handle
    calls = {"n": 0}

    def flaky(method, auth, body):
        calls["n"] += 1
        if method == "chat.update" and calls["n"] < 4:
            return 500, {"ok": False, "error": "internal_error"}, {}
        return original(method, auth, body)

    slack.handle = flaky  # type: ignore[method-assign]
    for tick in range(1, 4):  # each failed edit defers Slack to a later tick
        deliver_pending(engine, receivers, T0 + dt.timedelta(minutes=15 * tick), sleep=Sleeps())
    [root] = slack.roots()
    assert len(slack.replies(root)) == 1 and root.text.startswith("[DQ] FAILED (level ERROR)")
