"""Delivery faults against the loopback servers: `dq deliver` SIGKILLed at one step then resumed,
two deliverers over one outbox, a 429 storm, a recovery inside a silence. Each scenario yields
at its checkpoints, so a test asserts there and benchmarks.faults runs it through and counts
what reached the servers."""

from __future__ import annotations

import datetime as dt
import io
import re
import time
from collections.abc import Iterator
from contextlib import contextmanager, redirect_stdout
from pathlib import Path
from subprocess import Popen

import sqlalchemy as sa

from alerting import DeliveryReport, EscalationPolicy, Recorded, deliver_pending, handle_outcome
from alerting.tables import notifications
from checkers import AlertLevel
from scheduling.cli import main
from scheduling.runner import RunReport, run_checks
from scheduling.schema import project_database
from scheduling.settings import Settings
from tests.alerting.conftest import T0, outcome
from tests.alerting.deliverers import (
    database,
    deliver,
    deliverer_env,
    start_deliver,
)
from tests.alerting.servers import (
    Gate,
    Mailbox,
    PagerDutyStandIn,
    SlackStandIn,
    loopback_receivers_toml,
)
from tests.polling import wait_for, wait_until_set

W, E = AlertLevel.WARNING, AlertLevel.ERROR
POLICY = EscalationPolicy(
    routes={"slack": W, "email": W, "pagerduty": E}, repeat_every=dt.timedelta(0)
)
EVERY_RECEIVER = EscalationPolicy(routes={"slack": E, "email": E, "pagerduty": E})
T1 = T0 + dt.timedelta(minutes=15)
LATER = dt.timedelta(minutes=10)  # a later `dq deliver --at`
QUARTER = dt.timedelta(minutes=15)


def rows(engine: sa.Engine) -> list[dict]:
    with engine.connect() as connection:
        return [
            dict(r)
            for r in connection.execute(
                sa.select(notifications).order_by(notifications.c.id)
            ).mappings()
        ]


def lease_runs_out(engine: sa.Engine) -> None:
    """The dead deliverer's lease (the database's time, whatever `--at` says) runs out: set in the
    past rather than waited for (RetryPolicy.lease_s is 120 s)."""
    with engine.begin() as connection:
        connection.execute(
            notifications.update()
            .where(notifications.c.lease_until.is_not(None))
            .values(lease_until=dt.datetime(2000, 1, 1, tzinfo=dt.UTC))
        )


def kill_at(env: dict, engine: sa.Engine, gate: Gate, receiver: str, at: dt.datetime) -> dict:
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


def killed_after_the_root(
    env: dict, engine: sa.Engine, receivers: dict, slack: SlackStandIn
) -> Iterator[object]:
    """SIGKILL once Slack stored a new incident's root post. Yields the held row; the report of
    an in-process deliverer inside the dead one's lease; then (None) after a `dq deliver` past
    the lease; the rest sends a later notification of the incident."""
    handle_outcome(engine, outcome(E), POLICY, T0)
    yield kill_at(env, engine, slack.gates.add("chat.postMessage:after"), "slack", T0)
    yield deliver_pending(engine, receivers, T0 + dt.timedelta(seconds=30))
    lease_runs_out(engine)
    deliver(env, T0 + LATER)
    yield None
    handle_outcome(engine, outcome(E), POLICY, T1)
    deliver_pending(engine, receivers, T1)


def killed_in_a_follow_up(
    env: dict, engine: sa.Engine, receivers: dict, slack: SlackStandIn, point: str
) -> Iterator[dict]:
    """A raised level (thread reply, then root edit) SIGKILLed at `point`; yields the held row,
    then resumes with a `dq deliver` past the lease."""
    handle_outcome(engine, outcome(W), POLICY, T0)
    deliver_pending(engine, receivers, T0)
    handle_outcome(engine, outcome(E, failing=5), POLICY, T1)  # level raised: reply + edit
    yield kill_at(env, engine, slack.gates.add(point), "slack", T1)
    lease_runs_out(engine)
    deliver(env, T1 + LATER)


def killed_during_a_call(
    env: dict, engine: sa.Engine, mailbox: Mailbox, pagerduty: PagerDutyStandIn, receiver: str
) -> Iterator[dict]:
    """SIGKILL while an email is stored but not answered (250), or a PagerDuty event accepted
    but not answered; yields the held row, then resumes with a `dq deliver` past the lease."""
    handle_outcome(engine, outcome(E), POLICY, T0)
    gates, point = (
        (mailbox.gates, "DATA") if receiver == "email" else (pagerduty.gates, "enqueue:after")
    )
    yield kill_at(env, engine, gates.add(point), receiver, T0)
    lease_runs_out(engine)
    deliver(env, T0 + LATER)


@contextmanager
def two_deliverers(
    kind: str, tmp_path: Path, http: str, smtp_port: int, cert: Path, slack: SlackStandIn
) -> Iterator[tuple[list[Popen[str]], list[tuple[str, str]], sa.Engine]]:
    """Two `dq deliver` over one outbox of 4 incidents on a fresh `kind` database, one of them
    held mid-post while the other delivers; yields both processes, their outputs and the
    database when both are done."""
    with database(kind, tmp_path) as url:
        engine = project_database(url)
        for i in range(4):
            handle_outcome(engine, outcome(E, check=f"check_{i}"), POLICY, T0)
        env = deliverer_env(tmp_path, url, http, smtp_port, cert)
        gate = slack.gates.add("chat.postMessage:after")  # one deliverer stops mid-post
        processes = [start_deliver(env, T0), start_deliver(env, T0)]
        try:
            wait_until_set(gate.reached, "a held post")
            wait_for(lambda: len(slack.messages) >= 2, "the other deliverer posting meanwhile")
        except AssertionError as exc:
            gate.release.set()
            raise AssertionError([p.communicate(timeout=60) for p in processes]) from exc
        gate.release.set()
        try:
            yield processes, [p.communicate(timeout=60) for p in processes], engine
        finally:
            engine.dispose()


def incidents(engine: sa.Engine, count: int) -> None:
    """`count` ERROR incidents, each routed to Slack, email and PagerDuty."""
    for i in range(count):
        handle_outcome(engine, outcome(E, check=f"check_{i}"), EVERY_RECEIVER, T0)


def slack_429_storm(
    engine: sa.Engine, receivers: dict, slack: SlackStandIn
) -> Iterator[tuple[DeliveryReport, float]]:
    """5 incidents while Slack answers 429 (Retry-After 120 s). Yields each run's report and
    wall time: the first run; a run 60 s later; once Slack is back, a run 1 s past the
    Retry-After."""
    incidents(engine, 5)
    slack.rate_limited = "120"
    first = timed_delivery(engine, receivers, T0)
    yield first
    yield timed_delivery(engine, receivers, T0 + dt.timedelta(seconds=60))
    slack.rate_limited = None
    yield timed_delivery(engine, receivers, T0 + dt.timedelta(seconds=121 + first[1]))


def timed_delivery(
    engine: sa.Engine, receivers: dict, now: dt.datetime
) -> tuple[DeliveryReport, float]:
    started = time.monotonic()
    report = deliver_pending(engine, receivers, now)
    return report, time.monotonic() - started


def silence_env(tmp_path: Path, url: str, http: str, smtp_port: int) -> dict[str, str]:
    """The environment of `dq` on the project database `url` with a dq.toml routing every level
    to Slack and email and ERROR to PagerDuty, and a nightly silence of orders_* from T0 + 5 h
    to T0 + 6 h."""
    config = tmp_path / "dq.toml"
    config.write_text(
        f"""
{loopback_receivers_toml(http, smtp_port)}
[policies.default]
routes = {{ slack = "WARNING", email = "WARNING", pagerduty = "ERROR" }}

[[silences]]
check = "orders_*"
starts_at = {(T0 + 20 * QUARTER).isoformat()}
ends_at = {(T0 + 24 * QUARTER).isoformat()}
comment = "nightly reload"
"""
    )
    return {
        "DQ_DATABASE_URL": url,
        "DQ_CONFIG": str(config),
        "DQ_STATE_DIR": str(tmp_path / "state"),
    }


def tick(settings: Settings, quarters: int) -> RunReport:
    """One `dq run` tick with nothing due: replay, reconcile ended mutes, deliver."""
    report = run_checks([], now=T0 + quarters * QUARTER, settings=settings)
    assert report.delivery is not None and not report.delivery.pending
    return report


def record(
    settings: Settings,
    level: AlertLevel | None,
    quarters: int,
    policy: EscalationPolicy | None = None,
) -> Recorded:
    return handle_outcome(
        settings.engine,
        outcome(level),
        policy or settings.default_policy,
        T0 + quarters * QUARTER,
        mutes=settings.mutes,
    )


def dq(*args: str) -> tuple[int, str]:
    """`dq` in this process: its exit code and what it printed."""
    out = io.StringIO()
    with redirect_stdout(out):
        code = main(list(args))
    return code, out.getvalue()


def recovery_inside_an_expired_silence(settings: Settings) -> Iterator[object]:
    """An ERROR incident is told; `dq silence add` mutes it; the check recovers inside the
    silence; `dq silence expire` ends it; the next tick reconciles. Yields after the first tick;
    (silence id, `add` exit code, `list` result); the recovery's record; after two silenced
    ticks; `expire`'s exit code after the reconciling tick; the rest is one more tick."""
    record(settings, E, 0)
    tick(settings, 0)
    yield None
    at = (T0 + QUARTER).isoformat()
    added = dq("silence", "add", "orders_*", "--for", "2h", "--comment", "backfill", "--at", at)
    silence_id = int(re.search(r"silence (\d+):", added[1]).group(1))  # type: ignore[union-attr]
    yield silence_id, added[0], dq("silence", "list", "--at", at)
    yield record(settings, None, 2)  # the check recovers inside the silence
    tick(settings, 2)
    tick(settings, 3)  # still silenced: nothing goes out
    yield None
    expired, _ = dq("silence", "expire", str(silence_id), "--at", (T0 + 3 * QUARTER).isoformat())
    tick(settings, 4)  # the next tick reconciles and delivers
    yield expired
    tick(settings, 5)  # reconciled once: nothing more
