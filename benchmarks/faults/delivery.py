"""Faults of delivery, on the loopback stand-ins: `dq deliver` SIGKILLed at each step and
resumed, two deliverers over one outbox, a silence ending after a recovery, a 429 storm. No
Spark: the outbox is filled in this process, as a run would."""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from unittest import mock

import sqlalchemy as sa

from benchmarks.faults.tally import Row, arrivals, tally
from scheduling.schema import project_database
from scheduling.settings import Settings
from tests.alerting.deliverers import deliverer_env
from tests.alerting.scenarios import (
    killed_after_the_root,
    killed_during_a_call,
    killed_in_a_follow_up,
    recovery_inside_an_expired_silence,
    silence_env,
    slack_429_storm,
    two_deliverers,
)
from tests.alerting.stand import Stand, loopback_stand

NEW = {"slack root": 1, "email": 1, "pagerduty trigger": 1}  # a new ERROR incident
#: A later notification of an open ERROR incident.
FOLLOW_UP = {"slack reply": 1, "slack edit": 1, "email": 1, "pagerduty trigger": 1}
#: A WARNING incident (Slack root, email) raised to ERROR (reply, root edit, email, trigger).
WARNING_THEN_ERROR = {"slack root": 1, **FOLLOW_UP, "email": 2}


@dataclass
class Bench:
    stand: Stand
    engine: sa.Engine
    env: dict  # `dq deliver`'s environment
    tmp: Path


@contextmanager
def bench() -> Iterator[Bench]:
    """Fresh stand-ins, a SQLite project database and the environment of `dq deliver`."""
    with tempfile.TemporaryDirectory() as name, loopback_stand(Path(name)) as stand:
        tmp = Path(name)
        engine = project_database(f"sqlite:///{tmp / 'dq.db'}")
        try:
            env = deliverer_env(tmp, str(engine.url), stand.http, stand.smtp_port, stand.cert)
            yield Bench(stand, engine, env, tmp)
        finally:
            engine.dispose()


def _count(fault: str, expected: dict[str, int], b: Bench, started: float, notes: str) -> Row:
    found = arrivals(b.stand.slack, b.stand.pagerduty, b.stand.mailbox)
    return tally(fault, expected, found, time.perf_counter() - started, notes)


def run_through(steps: Iterable[object]) -> None:
    """A scenario's checkpoints are for tests; here it just runs to its end."""
    for _ in steps:
        pass


def killed_after_the_root_post(fault: str) -> Row:
    with bench() as b:
        started = time.perf_counter()
        run_through(killed_after_the_root(b.env, b.engine, b.stand.receivers, b.stand.slack))
        lookups = [m for m, _ in b.stand.slack.calls].count("conversations.history")
        notes = (
            f"the new run found the root by its metadata ({lookups} lookup); the incident's "
            "next notification replies in its thread"
        )
        return _count(
            fault, {**NEW, **FOLLOW_UP, "email": 2, "pagerduty trigger": 2}, b, started, notes
        )


def killed_in_a_follow_up_step(fault: str, point: str, notes: str) -> Row:
    with bench() as b:
        started = time.perf_counter()
        run_through(killed_in_a_follow_up(b.env, b.engine, b.stand.receivers, b.stand.slack, point))
        return _count(fault, WARNING_THEN_ERROR, b, started, notes)


def killed_during(fault: str, receiver: str, notes: str) -> Row:
    with bench() as b:
        started = time.perf_counter()
        s = b.stand
        run_through(killed_during_a_call(b.env, b.engine, s.mailbox, s.pagerduty, receiver))
        return _count(fault, NEW, b, started, notes)


def two_deliverers_on_postgres(fault: str) -> Row:
    with bench() as b:
        s = b.stand
        started = time.perf_counter()
        with two_deliverers("postgres", b.tmp, s.http, s.smtp_port, s.cert, s.slack) as found:
            codes = [p.returncode for p in found[0]]
        notes = f"4 incidents, one deliverer held mid-post; exit codes {codes}"
        return _count(fault, {kind: 4 * n for kind, n in NEW.items()}, b, started, notes)


def silence_ends_after_recovery(fault: str) -> Row:
    with bench() as b:
        s = b.stand
        started = time.perf_counter()
        with mock.patch.dict(
            os.environ, silence_env(b.tmp, str(b.engine.url), s.http, s.smtp_port)
        ):
            settings = Settings.from_environment(receivers=s.receivers)
            run_through(recovery_inside_an_expired_silence(settings))
        expected = {**NEW, "slack reply": 1, "slack edit": 1, "email": 2, "pagerduty resolve": 1}
        notes = "the tick after `dq silence expire`: resolve, reply + root edit, email"
        return _count(fault, expected, b, started, notes)


def slack_429_storm_with_5_incidents(fault: str) -> Row:
    with bench() as b:
        s = b.stand
        steps = slack_429_storm(b.engine, s.receivers, s.slack)
        report, seconds = next(steps)
        first = len(arrivals(s.slack, s.pagerduty, s.mailbox))
        run_through(steps)
        notes = (
            f"time of the first run: {first} delivered (email, PagerDuty), {len(report.pending)} "
            f"Slack deferred; Slack's {len(s.slack.roots())} in a later run past the Retry-After"
        )
        expected = {kind: 5 * n for kind, n in NEW.items()}
        return tally(fault, expected, arrivals(s.slack, s.pagerduty, s.mailbox), seconds, notes)
