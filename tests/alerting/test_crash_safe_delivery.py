"""Acceptance 2: `dq deliver` SIGKILLed at each external step (after Slack stored the root, after
the thread reply, after the root edit, during an email, during a PagerDuty call), then a new
`dq deliver`: nothing is lost and at most the step in flight is repeated. And two deliverers over
one outbox (SQLite, PostgreSQL, MariaDB) send each notification exactly once."""

from __future__ import annotations

import datetime as dt
import re

import pytest
import sqlalchemy as sa

from alerting import EscalationPolicy, deliver_pending, handle_outcome
from checkers import AlertLevel
from checkers.storage import notifications, project_database
from tests.alerting.conftest import T0, outcome
from tests.alerting.deliverers import (
    database,
    deliver,
    deliverer_env,
    start_deliver,
    wait_for,
)

W, E = AlertLevel.WARNING, AlertLevel.ERROR
POLICY = EscalationPolicy(
    routes={"slack": W, "email": W, "pagerduty": E}, repeat_every=dt.timedelta(0)
)
T1 = T0 + dt.timedelta(minutes=15)
LATER = dt.timedelta(minutes=10)  # past the killed deliverer's lease (RetryPolicy.lease_s)


def rows(engine) -> list[dict]:
    with engine.connect() as connection:
        return [
            dict(r)
            for r in connection.execute(
                sa.select(notifications).order_by(notifications.c.id)
            ).mappings()
        ]


@pytest.fixture
def env(tmp_path, engine, http, smtp, certificate):
    port, _ = smtp
    return deliverer_env(tmp_path, str(engine.url), http, port, certificate[0])


def kill_at(env, engine, gate, receiver: str, at: dt.datetime) -> dict:
    """Start `dq deliver`, SIGKILL it while `gate` holds `receiver`'s step (once the other
    receivers are done), release the gate; returns the held row as the dead process left it."""
    process = start_deliver(env, at)
    wait_for(lambda: gate.reached.is_set() or process.poll() is not None, "the held step")
    assert process.poll() is None, process.communicate()
    wait_for(
        lambda: all(r["status"] == "sent" for r in rows(engine) if r["receiver"] != receiver),
        "the other receivers",
    )
    process.kill()
    process.wait()
    gate.release.set()
    [held] = [r for r in rows(engine) if r["status"] != "sent"]
    assert held["receiver"] == receiver and held["status"] == "pending"
    return held


def test_killed_after_slack_stored_the_root(env, engine, receivers, slack, smtp, pagerduty):
    handle_outcome(engine, outcome(E), POLICY, T0)
    gate = slack.gates.add("chat.postMessage:after")
    held = kill_at(env, engine, gate, "slack", T0)
    assert (held["step_started"], held["steps_done"]) == (0, 0)  # begun, never confirmed
    early = deliver_pending(engine, receivers, T0 + dt.timedelta(seconds=30))
    assert early.pending == [held["dedup_key"]] and len(slack.messages) == 1  # still leased

    deliver(env, T0 + LATER)
    [root] = slack.roots()  # found by its metadata and adopted, not posted again
    assert [m for m, _ in slack.calls].count("conversations.history") == 1
    handle_outcome(engine, outcome(E), POLICY, T1)
    deliver_pending(engine, receivers, T1)
    assert slack.roots() == [root] and len(slack.replies(root)) == 1 and len(root.edits) == 1
    assert {r["status"] for r in rows(engine)} == {"sent"}
    assert (len(smtp[1].messages), len(pagerduty.events)) == (2, 2)


@pytest.mark.parametrize(
    ("point", "step"), [("chat.postMessage:after", 0), ("chat.update:after", 1)]
)
def test_killed_after_the_thread_reply_or_the_root_edit(env, engine, receivers, slack, point, step):
    handle_outcome(engine, outcome(W), POLICY, T0)
    deliver_pending(engine, receivers, T0)
    handle_outcome(engine, outcome(E, failing=5), POLICY, T1)  # level raised: reply + edit
    gate = slack.gates.add(point)
    held = kill_at(env, engine, gate, "slack", T1)
    assert (held["step_started"], held["steps_done"]) == (step, step)  # the reply was recorded

    deliver(env, T1 + LATER)
    [root] = slack.roots()
    [reply] = slack.replies(root)  # one thread, the reply once
    assert "Escalated to ERROR" in reply.text and root.text.startswith("[DQ] ERROR")
    assert len(root.edits) == 1 + step  # only the edit that was in flight is repeated
    assert {r["status"] for r in rows(engine)} == {"sent"}


@pytest.mark.parametrize("receiver", ["email", "pagerduty"])
def test_killed_during_an_email_or_a_pagerduty_call(env, engine, slack, smtp, pagerduty, receiver):
    _, mailbox = smtp
    handle_outcome(engine, outcome(E), POLICY, T0)
    gates, point = (
        (mailbox.gates, "DATA") if receiver == "email" else (pagerduty.gates, "enqueue:after")
    )
    held = kill_at(env, engine, gates.add(point), receiver, T0)
    assert held["step_started"] == 0

    deliver(env, T0 + LATER)
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
    with database(kind, tmp_path) as url:
        engine = project_database(url)
        for i in range(4):
            handle_outcome(engine, outcome(E, check=f"check_{i}"), POLICY, T0)
        env = deliverer_env(tmp_path, url, http, port, certificate[0])
        gate = slack.gates.add("chat.postMessage:after")  # one deliverer stops mid-post
        processes = [start_deliver(env, T0), start_deliver(env, T0)]
        try:
            wait_for(gate.reached.is_set, "a held post")
            wait_for(lambda: len(slack.messages) >= 2, "the other deliverer posting meanwhile")
        except AssertionError as exc:
            gate.release.set()
            raise AssertionError([p.communicate(timeout=60) for p in processes]) from exc
        gate.release.set()
        outputs = [p.communicate(timeout=60) for p in processes]
        assert all(p.returncode == 0 for p in processes), outputs
        assert not any("Traceback" in err for _, err in outputs), outputs
        sent = [int(re.search(r"sent (\d+)", out).group(1)) for out, _ in outputs]  # type: ignore[union-attr]
        assert sum(sent) == 12 and min(sent) >= 1  # both delivered, together everything once
        assert len(slack.messages) == len(slack.roots()) == 4
        assert len({m.metadata["event_payload"]["dedup_key"] for m in slack.roots()}) == 4
        assert len({m["Message-ID"] for m in mailbox.messages}) == len(mailbox.messages) == 4
        assert len({e["dedup_key"] for e in pagerduty.events}) == len(pagerduty.events) == 4
        assert {r["status"] for r in rows(engine)} == {"sent"}
        engine.dispose()
