"""Outbox faults of issue 28 against the loopback servers: two deliverers whose clocks differ by
300 s, two installations posting to one Slack channel with a post in doubt, a failed notification
re-sent with `dq outbox retry` once its token is fixed. The acceptance tests assert at each step;
benchmarks.faults runs them through and counts what reached the servers."""

from __future__ import annotations

import datetime as dt
import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import sqlalchemy as sa

from alerting import deliver_pending, handle_outcome
from alerting.receivers import Receiver
from alerting.tables import notifications
from checkers import AlertLevel
from scheduling.schema import project_database
from tests.alerting.conftest import SLACK_TOKEN, T0, outcome
from tests.alerting.deliverers import database, deliverer_env, start_deliver
from tests.alerting.scenarios import EVERY_RECEIVER, incidents, rows
from tests.alerting.servers import Mailbox, PagerDutyStandIn, loopback_receivers_toml
from tests.polling import wait_until_set
from tests.scheduling import in_process


def deliverers_300_s_apart(
    kind: str,
    tmp_path: Path,
    http: str,
    smtp_port: int,
    cert: Path,
    mailbox: Mailbox,
    pagerduty: PagerDutyStandIn,
    *,
    count: int = 40,
) -> tuple[list[subprocess.CompletedProcess[str]], set[str]]:
    """`count` ERROR incidents (each to Slack, email and PagerDuty) on a fresh `kind` database;
    a live `dq deliver` at T0 is held inside an email and a PagerDuty call while a backfill
    `dq deliver --at T0 + 300 s` runs to its end; then the live one is let go. Returns both
    processes (the backfill first) and the statuses of the outbox's rows."""
    with database(kind, tmp_path) as url:
        engine = project_database(url)
        try:
            incidents(engine, count)
            env = deliverer_env(tmp_path, url, http, smtp_port, cert)
            # the held calls must outlast the backfill without timing out (a timed-out email is
            # in doubt and sent again by design: not what this scenario is about)
            (tmp_path / "dq.toml").write_text(
                loopback_receivers_toml(http, smtp_port, timeout_s=110)
            )
            held = [mailbox.gates.add("DATA"), pagerduty.gates.add("enqueue:after")]
            live = start_deliver(env, T0)
            try:
                for gate in held:
                    wait_until_set(gate.reached, "the live deliverer held")
                backfill = start_deliver(env, T0 + dt.timedelta(seconds=300))
                done = [_finished(backfill)]
            finally:
                for gate in held:
                    gate.release.set()
            done.append(_finished(live))
            return done, {r["status"] for r in rows(engine)}
        finally:
            engine.dispose()


def _finished(process: subprocess.Popen[str]) -> subprocess.CompletedProcess[str]:
    out, err = process.communicate(timeout=120)
    return subprocess.CompletedProcess(process.args, process.returncode, out, err)


@contextmanager
def two_installations_in_one_channel(
    tmp_path: Path, receivers: dict[str, Receiver]
) -> Iterator[tuple[sa.Engine, sa.Engine]]:
    """Production and staging (two SQLite databases: two installations) each open incident 1
    of orders_total, routed to Slack, email and PagerDuty. Production delivers; staging's
    deliverer died with its post in doubt (begun, never confirmed, as a SIGKILL between the call
    and its record leaves it) and staging delivers again. Yields both databases afterwards."""
    production = project_database(f"sqlite:///{tmp_path / 'production.db'}")
    staging = project_database(f"sqlite:///{tmp_path / 'staging.db'}")
    try:
        for engine in (production, staging):
            failed = outcome(AlertLevel.ERROR, check="orders_total")
            handle_outcome(engine, failed, EVERY_RECEIVER, T0)
        deliver_pending(production, receivers, T0)
        with staging.begin() as connection:
            connection.execute(notifications.update().values(step_started=0, steps_done=0))
        deliver_pending(staging, receivers, T0)
        yield production, staging
    finally:
        production.dispose()
        staging.dispose()


def two_incidents_told_everywhere(
    tmp_path: Path, http: str, smtp_port: int
) -> tuple[sa.Engine, dict[str, str]]:
    """Two ERROR incidents routed to Slack, email and PagerDuty on a fresh SQLite database, and
    the environment of `dq` on it (its dq.toml points at the loopback servers)."""
    url = f"sqlite:///{tmp_path / 'dq.db'}"
    engine = project_database(url)
    for check in ("orders_total", "orders_customer"):
        handle_outcome(engine, outcome(AlertLevel.ERROR, check=check), EVERY_RECEIVER, T0)
    (tmp_path / "dq.toml").write_text(loopback_receivers_toml(http, smtp_port, timeout_s=10))
    env = {
        "DQ_DATABASE_URL": url,
        "DQ_CONFIG": str(tmp_path / "dq.toml"),
        "DQ_STATE_DIR": str(tmp_path / "state"),
    }
    return engine, env


def dq(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return in_process.dq(env, *args, cwd=Path(env["DQ_CONFIG"]).parent)


def retried_once_the_token_is_fixed(
    env: dict[str, str],
) -> Iterator[subprocess.CompletedProcess[str]]:
    """Slack's token revoked (SLACK_BOT_TOKEN, restored afterwards): yields `dq deliver`, then
    `dq outbox list --status failed`; the token fixed: `dq outbox retry --receiver slack`; then
    `dq outbox retry` (all) and `dq outbox list`."""
    token = os.environ.get("SLACK_BOT_TOKEN")
    os.environ["SLACK_BOT_TOKEN"] = "xoxb-revoked"
    try:
        yield dq(env, "deliver", "--at", T0.isoformat())
        yield dq(env, "outbox", "list", "--status", "failed")
        os.environ["SLACK_BOT_TOKEN"] = SLACK_TOKEN  # the token is fixed
        yield dq(env, "outbox", "retry", "--receiver", "slack", "--at", T0.isoformat())
        yield dq(env, "outbox", "retry")
        yield dq(env, "outbox", "list")
    finally:
        if token is None:
            os.environ.pop("SLACK_BOT_TOKEN", None)
        else:
            os.environ["SLACK_BOT_TOKEN"] = token
