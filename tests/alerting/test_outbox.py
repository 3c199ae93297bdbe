"""The outbox: written atomically with the run, permanent failures recorded and logged, the
embedded console and file receivers."""

from __future__ import annotations

import datetime as dt
import json
import logging

import pytest
import sqlalchemy as sa

from alerting import EscalationPolicy, deliver_pending, handle_outcome
from alerting.receivers import ConsoleReceiver, FileReceiver
from alerting.tables import incidents, notifications, runs
from checkers import AlertLevel
from tests.alerting.conftest import T0, outcome

POLICY = EscalationPolicy(routes={"console": AlertLevel.WARNING, "file": AlertLevel.WARNING})


class BrokenMute:
    def mutes(self, check, now, fingerprint=""):
        raise RuntimeError("mute store unreachable")


def count(engine, table) -> int:
    with engine.connect() as connection:
        return connection.execute(sa.select(sa.func.count()).select_from(table)).scalar()


def test_run_incident_and_outbox_commit_together(engine):
    with pytest.raises(RuntimeError):
        handle_outcome(engine, outcome(AlertLevel.ERROR), POLICY, T0, mutes=[BrokenMute()])
    assert (count(engine, runs), count(engine, incidents), count(engine, notifications)) == (
        0,
        0,
        0,
    )
    handle_outcome(engine, outcome(AlertLevel.ERROR), POLICY, T0)
    assert (count(engine, runs), count(engine, incidents), count(engine, notifications)) == (
        1,
        1,
        2,
    )


def test_permanent_failures_are_recorded_and_logged(engine, receivers, pagerduty, caplog):
    pagerduty.faults.append(400)
    policy = EscalationPolicy(routes={"pagerduty": AlertLevel.ERROR, "nowhere": AlertLevel.ERROR})
    handle_outcome(engine, outcome(AlertLevel.ERROR), policy, T0)
    report = deliver_pending(engine, receivers, T0, sleep=lambda s: None)
    assert len(report.failed) == 2 and not report.sent
    with engine.connect() as connection:
        errors = dict(
            connection.execute(
                sa.select(notifications.c.receiver, notifications.c.last_error)
            ).all()
        )
    assert errors["pagerduty"] == "PagerDuty answered 400"
    assert errors["nowhere"] == "no receiver named 'nowhere' is configured"
    assert "failed permanently" in caplog.text and "nowhere" in caplog.text


def test_console_and_file_receivers(engine, tmp_path, caplog):
    caplog.set_level(logging.WARNING, logger="dq.alerts")
    receivers = {"console": ConsoleReceiver(), "file": FileReceiver("file", tmp_path / "a.jsonl")}
    handle_outcome(engine, outcome(AlertLevel.ERROR), POLICY, T0)
    assert len(deliver_pending(engine, receivers, T0).sent) == 2
    assert "[DQ] FAILED (level ERROR): orders_have_customers" in caplog.text
    [line] = (tmp_path / "a.jsonl").read_text().splitlines()
    record = json.loads(line)
    assert record["reason"] == "new" and record["outcome"]["failing"] == 3


def test_the_console_gathers_repeats_into_one_still_failing_line(engine, tmp_path, caplog):
    caplog.set_level(logging.WARNING, logger="dq.alerts")
    receivers = {"console": ConsoleReceiver(), "file": FileReceiver("file", tmp_path / "a.jsonl")}
    policy = EscalationPolicy(
        routes=POLICY.routes, escalate_after_runs=None, repeat_every=dt.timedelta(0)
    )
    checks = ("orders_have_customers", "orders_have_amounts", "orders_are_unique")
    for n, at in enumerate(T0 + dt.timedelta(hours=h) for h in range(3)):
        for check in checks[: n + 1]:  # one new incident a run; the open ones repeat
            handle_outcome(engine, outcome(AlertLevel.ERROR, check=check), policy, at)
        deliver_pending(engine, receivers, at)
    lines = [r.getMessage() for r in caplog.records if r.name == "dq.alerts"]
    new = [
        f"[DQ] FAILED (level ERROR): {check}: 3 of 120 elements failing (2.50%)" for check in checks
    ]
    assert lines == [  # new incidents get their own line; each run's repeats end it as one
        new[0],
        new[1],
        "still failing: 1 incident (orders_have_customers: run 2)",
        new[2],
        "still failing: 2 incidents (orders_have_amounts: run 2, orders_have_customers: run 3)",
    ]
    told = [json.loads(line) for line in (tmp_path / "a.jsonl").read_text().splitlines()]
    assert [r["reason"] for r in told] == ["new", "repeat", "new", "repeat", "repeat", "new"]


def test_a_backlog_is_delivered_most_urgent_first(engine):
    """With more pending than a run can send, CRITICAL goes first, then ERROR, then WARNING,
    each level oldest first; a thread keeps its order."""
    from alerting import outbox, outbox_steps

    levels = [AlertLevel.WARNING, AlertLevel.ERROR, AlertLevel.CRITICAL] * 2
    for i, level in enumerate(levels):
        handle_outcome(engine, outcome(level, check=f"check_{i}"), POLICY, T0)
    order = []
    while found := outbox.claim_many(
        engine, "console", holder="me", now=T0, lease=dt.timedelta(hours=1), limit=1
    ):
        [claimed] = found
        order.append((claimed.notification.level, claimed.notification.outcome.check))
        with engine.begin() as connection:
            outbox_steps.finish_step(
                connection, claimed, steps_done=1, thread={}, sent=True, now=T0
            )
    assert order == [
        (AlertLevel.CRITICAL, "check_2"),
        (AlertLevel.CRITICAL, "check_5"),
        (AlertLevel.ERROR, "check_1"),
        (AlertLevel.ERROR, "check_4"),
        (AlertLevel.WARNING, "check_0"),
        (AlertLevel.WARNING, "check_3"),
    ]
