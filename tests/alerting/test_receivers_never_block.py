"""Acceptance 5: receivers never block a run. A 429 storm (Retry-After 120 s) defers Slack to a
later tick while email and PagerDuty go out in the same run; an outage grows a persisted backoff;
a hanging receiver is bounded by its request timeout and delays no other; one receiver's time per
run is bounded by its budget."""

from __future__ import annotations

import datetime as dt
import threading
import time

import sqlalchemy as sa

from alerting import RetryPolicy, deliver_pending
from alerting.backoff import load_backoff
from alerting.receivers import SlackReceiver
from alerting.tables import notifications
from checkers.project_db import as_utc
from tests.alerting.conftest import T0
from tests.alerting.scenarios import incidents, slack_429_storm
from tests.polling import wait_for, wait_until_set

TICK = dt.timedelta(minutes=15)


def slack_rows(engine) -> list[dict]:
    with engine.connect() as connection:
        query = sa.select(notifications).where(notifications.c.receiver == "slack")
        return [dict(r) for r in connection.execute(query).mappings()]


def test_a_429_storm_defers_slack_and_delays_nobody(engine, receivers, slack, smtp, pagerduty):
    steps = slack_429_storm(engine, receivers, slack)
    report, elapsed = next(steps)
    policy = RetryPolicy()
    assert elapsed < policy.budget_s + receivers["slack"].timeout_s  # the documented bound
    assert elapsed < 10  # in fact: not waited on at all (was 104 s for 5 incidents)
    assert (len(smtp[1].messages), len(pagerduty.events)) == (5, 5)  # in the same run
    assert len(report.sent) == 10 and len(report.pending) == 5
    assert slack.refused == 1  # one call told us; the other four were not tried
    due = [as_utc(r["next_attempt_at"]) for r in slack_rows(engine)]
    limit = T0 + dt.timedelta(seconds=120 + elapsed)
    assert all(T0 + dt.timedelta(seconds=120) <= d <= limit for d in due)
    backoff = load_backoff(engine, "slack")
    assert (
        backoff.consecutive_failures == 1
        and backoff.last_error == "Slack answered 429: ratelimited"
    )
    assert T0 + dt.timedelta(seconds=120) <= backoff.not_before <= limit  # type: ignore[operator]

    next(steps)  # a run 60 s later: the persisted Retry-After leaves Slack alone
    assert slack.refused == 1 and len(slack_rows(engine)) == 5

    later, _ = next(steps)  # Slack is back, the run past the limit
    assert not later.pending and len(slack.roots()) == 5
    assert load_backoff(engine, "slack").consecutive_failures == 0


def test_slack_down_for_several_ticks_grows_its_backoff(engine, receivers, slack, smtp):
    incidents(engine, 2)
    slack.down = True
    waits = []
    for tick in range(4):
        now = T0 + tick * TICK
        deliver_pending(engine, receivers, now)
        backoff = load_backoff(engine, "slack")
        # not_before counts from the run's now plus the time the delivery took (under load, a
        # second or more): whole multiples of the 30 s base are what the policy decides
        seconds = (backoff.not_before - now).total_seconds()  # type: ignore[operator]
        waits.append(30 * int(seconds // 30))
    assert waits == [30, 60, 120, 240] and slack.refused == 4  # one call per tick
    assert len(smtp[1].messages) == 2
    slack.down = False
    deliver_pending(engine, receivers, T0 + 4 * TICK)
    assert len(slack.roots()) == 2 and {r["status"] for r in slack_rows(engine)} == {"sent"}


def test_a_hanging_slack_is_bounded_by_its_request_timeout(
    engine, receivers, slack, smtp, pagerduty
):
    receivers["slack"] = SlackReceiver(
        "slack", "c0dq", base_url=receivers["slack"].base_url, timeout_s=1
    )
    gate = slack.gates.add("chat.postMessage:after", times=10)  # stored, never answered
    incidents(engine, 1)
    started = time.monotonic()
    report = deliver_pending(engine, receivers, T0)
    assert time.monotonic() - started < 5  # the gate would hold it for 60 s
    assert (len(smtp[1].messages), len(pagerduty.events)) == (1, 1)
    [row] = slack_rows(engine)
    assert report.pending == [row["dedup_key"]] and row["step_started"] == 0  # in doubt
    gate.release.set()

    deliver_pending(engine, receivers, T0 + TICK)  # the stored post is found and adopted
    assert len(slack.messages) == 1 and slack_rows(engine)[0]["status"] == "sent"


def test_a_held_email_delays_neither_slack_nor_pagerduty(engine, receivers, slack, smtp, pagerduty):
    _, mailbox = smtp
    gate = mailbox.gates.add("DATA")  # held until released: far beyond the wait below
    incidents(engine, 1)
    run = threading.Thread(target=deliver_pending, args=(engine, receivers, T0))
    run.start()
    wait_until_set(gate.reached, "the held mail")
    wait_for(lambda: len(slack.roots()) == len(pagerduty.events) == 1, "Slack and PagerDuty")
    gate.release.set()
    run.join(timeout=30)
    assert not run.is_alive() and len(mailbox.messages) == 1


class Clock:
    """A monotonic clock the test moves."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_one_receiver_gets_at_most_its_budget_per_run(engine, receivers, slack):
    receivers = {"slack": receivers["slack"]}
    incidents(engine, 6)
    gate = slack.gates.add("chat.postMessage:after")
    policy, clock = RetryPolicy(budget_s=60), Clock()
    run = threading.Thread(
        target=deliver_pending,
        args=(engine, receivers, T0),
        kwargs={"retry": policy, "clock": clock},
    )
    run.start()
    wait_until_set(gate.reached, "the first post")
    clock.now = policy.budget_s  # the budget runs out while the post is held
    gate.release.set()
    run.join(timeout=30)
    assert not run.is_alive()
    assert len(slack.roots()) == 1  # the step in flight finished; no new row was started
    pending = [r for r in slack_rows(engine) if r["status"] == "pending"]
    assert len(pending) == 5 and all(r["next_attempt_at"] is None for r in pending)
    deliver_pending(engine, receivers, T0 + TICK)  # not a backoff: the next run goes on
    assert len(slack.roots()) == 6
