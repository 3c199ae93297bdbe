"""Acceptance 2: `dq deliver` SIGKILLed at each external step (after Slack stored the root, after
the thread reply, after the root edit, during an email, during a PagerDuty call), then a new
`dq deliver`: nothing is lost and at most the step in flight is repeated. And two deliverers over
one outbox (SQLite, PostgreSQL, MariaDB) send each notification exactly once."""

from __future__ import annotations

import re

import pytest

from tests.alerting.deliverers import deliverer_env
from tests.alerting.scenarios import (
    killed_after_the_root,
    killed_during_a_call,
    killed_in_a_follow_up,
    rows,
    two_deliverers,
)


@pytest.fixture
def env(tmp_path, engine, http, smtp, certificate):
    port, _ = smtp
    return deliverer_env(tmp_path, str(engine.url), http, port, certificate[0])


def test_killed_after_slack_stored_the_root(env, engine, receivers, slack, smtp, pagerduty):
    steps = killed_after_the_root(env, engine, receivers, slack)
    held = next(steps)
    assert (held["step_started"], held["steps_done"]) == (0, 0)  # begun, never confirmed
    early = next(steps)
    assert early.pending == [held["dedup_key"]] and len(slack.messages) == 1  # still leased

    next(steps)  # `dq deliver` past the lease
    [root] = slack.roots()  # found by its metadata and adopted, not posted again
    assert [m for m, _ in slack.calls].count("conversations.history") == 1
    next(steps, None)  # a later notification of the incident
    assert slack.roots() == [root] and len(slack.replies(root)) == 1 and len(root.edits) == 1
    assert {r["status"] for r in rows(engine)} == {"sent"}
    assert (len(smtp[1].messages), len(pagerduty.events)) == (2, 2)


@pytest.mark.parametrize(
    ("point", "step"), [("chat.postMessage:after", 0), ("chat.update:after", 1)]
)
def test_killed_after_the_thread_reply_or_the_root_edit(env, engine, receivers, slack, point, step):
    steps = killed_in_a_follow_up(env, engine, receivers, slack, point)
    held = next(steps)
    assert (held["step_started"], held["steps_done"]) == (step, step)  # the reply was recorded

    next(steps, None)  # `dq deliver` past the lease
    [root] = slack.roots()
    [reply] = slack.replies(root)  # one thread, the reply once
    assert "Escalated to ERROR" in reply.text and root.text.startswith("[DQ] FAILED (level ERROR)")
    assert len(root.edits) == 1 + step  # only the edit that was in flight is repeated
    assert {r["status"] for r in rows(engine)} == {"sent"}


@pytest.mark.parametrize("receiver", ["email", "pagerduty"])
def test_killed_during_an_email_or_a_pagerduty_call(env, engine, slack, smtp, pagerduty, receiver):
    _, mailbox = smtp
    steps = killed_during_a_call(env, engine, mailbox, pagerduty, receiver)
    held = next(steps)
    assert held["step_started"] == 0

    next(steps, None)  # `dq deliver` past the lease
    assert {r["status"] for r in rows(engine)} == {"sent"}
    assert len(slack.roots()) == 1
    if receiver == "email":  # repeated once, as the same message
        assert len(mailbox.messages) == 2 and len({m["Message-ID"] for m in mailbox.messages}) == 1
        assert len(pagerduty.events) == 1
    else:
        assert len(pagerduty.events) == 2
        assert len({e["dedup_key"] for e in pagerduty.events}) == 1
        assert len(mailbox.messages) == 1


@pytest.mark.parametrize(
    "kind",
    [
        "sqlite",
        pytest.param("postgres", marks=pytest.mark.postgres),
        pytest.param("mariadb", marks=pytest.mark.mariadb),
    ],
)
def test_two_deliverers_send_each_notification_once(
    kind, tmp_path, http, smtp, certificate, slack, pagerduty
):
    port, mailbox = smtp
    with two_deliverers(kind, tmp_path, http, port, certificate[0], slack) as (
        processes,
        outputs,
        engine,
    ):
        assert all(p.returncode == 0 for p in processes), outputs
        assert not any("Traceback" in err for _, err in outputs), outputs
        sent = [int(re.search(r"sent (\d+)", out).group(1)) for out, _ in outputs]  # type: ignore[union-attr]
        assert sum(sent) == 12 and min(sent) >= 1  # both delivered, together everything once
        assert len(slack.messages) == len(slack.roots()) == 4
        assert len({m.metadata["event_payload"]["dedup_key"] for m in slack.roots()}) == 4
        assert len({m["Message-ID"] for m in mailbox.messages}) == len(mailbox.messages) == 4
        assert len({e["dedup_key"] for e in pagerduty.events}) == len(pagerduty.events) == 4
        assert {r["status"] for r in rows(engine)} == {"sent"}
