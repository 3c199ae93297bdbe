"""Two `dq run --due` processes started at the same moment (a cron tick and a manual run, a
second apart) on one due, failing check, with Slack, PagerDuty and SMTP answering slowly, on a
fresh SQLite or PostgreSQL project database (tests/scheduling/test_overlapping_runs.py)."""

from __future__ import annotations

import os
import select
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import sqlalchemy as sa

from alerting.tables import incidents, notifications, runs
from scheduling.tables import claims
from tests.alerting.conftest import PAGERDUTY_KEY, SLACK_TOKEN
from tests.alerting.servers import (
    Mailbox,
    PagerDutyStandIn,
    SlackStandIn,
    http_server,
    loopback_receivers_toml,
    self_signed_certificate,
    smtp_server,
)
from tests.scheduling.databases import fresh_database

ROOT = Path(__file__).parents[2]
DELAY_S = 1.0  # every receiver answers after a second
GATED = [sys.executable, "-m", "tests.scheduling.gated_dq"]
TIMES = ["2026-11-22T07:00:00", "2026-11-22T07:00:01"]  # both windows start at 06:45


@dataclass
class Overlap:
    codes: list[int]
    outputs: list[str]  # stdout of each run
    recorded: dict[str, int]  # rows in the project database
    slack: SlackStandIn
    pagerduty: PagerDutyStandIn
    mailbox: Mailbox
    seconds: float  # from the start gate opening to both runs done


def _config(path: Path, http: str, smtp_port: int) -> Path:
    path.write_text(
        f"""
{loopback_receivers_toml(http, smtp_port)}
[policies.default]
routes = {{ slack = "warning", email = "warning", pagerduty = "critical" }}
"""
    )
    return path


def _gated(argv: list[str], env: dict[str, str], cwd: Path) -> tuple[subprocess.Popen, int, int]:
    """`dq argv` behind its start gate (tests/scheduling/gated_dq.py): the process, the pipe end
    it says it is ready on, and the one that opens its gate."""
    ready_read, ready_write = os.pipe()
    go_read, go_write = os.pipe()
    process = subprocess.Popen(
        [*GATED, str(ready_write), str(go_read), *argv],
        env=env,
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        pass_fds=(ready_write, go_read),
    )
    os.close(ready_write)  # the child's ends: a child that dies closes its ready pipe
    os.close(go_read)
    return process, ready_read, go_write


def _wait_until_ready(ready: list[int], processes: list[subprocess.Popen]) -> None:
    """Blocks until every gated run said it is ready (a byte on its pipe); a run that ends
    first closes its pipe with no byte, and fails the test with its output."""
    waiting = set(ready)
    while waiting:
        readable, _, _ = select.select(list(waiting), [], [], 120)
        assert readable, "runs not ready after 120 s"
        for fd in readable:
            if os.read(fd, 1) != b"r":
                dead = processes[ready.index(fd)]
                dead.kill()
                raise AssertionError(f"a run ended before its gate: {dead.communicate()}")
            waiting.discard(fd)


def overlapping_due_runs(kind: str, tmp_path: Path) -> Overlap:
    """Both runs behind a start gate that opens once both have imported everything."""
    cert, key = self_signed_certificate(tmp_path)
    slack, pagerduty = SlackStandIn(SLACK_TOKEN, delay_s=DELAY_S), PagerDutyStandIn(delay_s=DELAY_S)
    csv = tmp_path / "orders.csv"
    csv.write_text("order_id,customer\n1,10\n2,\n3,30\n")
    with (
        fresh_database(kind, tmp_path) as url,
        http_server(slack, pagerduty) as http,
        smtp_server(cert, key, delay_s=DELAY_S) as (smtp_port, mailbox),
    ):
        env = {
            **os.environ,
            "PYTHONPATH": str(ROOT),
            "PYSPARK_PYTHON": sys.executable,
            "DQ_CHECKS": "tests.scheduling.overlap_checks",
            "DQ_OVERLAP_CSV": str(csv),
            "DQ_DATABASE_URL": url,
            "DQ_CONFIG": str(_config(tmp_path / "dq.toml", http, smtp_port)),
            "DQ_STATE_DIR": str(tmp_path / "state"),
            "SLACK_BOT_TOKEN": SLACK_TOKEN,
            "PAGERDUTY_ROUTING_KEY": PAGERDUTY_KEY,
            "SSL_CERT_FILE": str(cert),  # the SMTP stand-in's certificate is trusted
        }
        gated = [_gated(["run", "--due", "--at", TIMES[i]], env, tmp_path) for i in range(2)]
        processes = [process for process, _, _ in gated]
        try:
            _wait_until_ready([ready for _, ready, _ in gated], processes)
            for _, _, go in gated:  # both runs start now
                os.write(go, b"g")
            started = time.monotonic()
            outputs = [p.communicate(timeout=300)[0] for p in processes]
            seconds = time.monotonic() - started
        finally:
            for p in processes:
                p.kill()
                p.wait()
            for _, ready, go in gated:
                os.close(ready)
                os.close(go)
        engine = sa.create_engine(url)
        try:
            recorded = _counts(engine)
        finally:
            engine.dispose()
    codes = [p.returncode for p in processes]
    return Overlap(codes, outputs, recorded, slack, pagerduty, mailbox, seconds)


def _counts(engine: sa.Engine) -> dict[str, int]:
    def count(table: sa.Table, *where: sa.ColumnElement[bool]) -> int:
        return connection.execute(
            sa.select(sa.func.count()).select_from(table).where(*where)
        ).scalar_one()

    with engine.connect() as connection:
        return {
            "runs": count(runs),
            "incidents": count(incidents),
            "claims done": count(claims, claims.c.status == "done"),
            "sent": count(notifications, notifications.c.status == "sent"),
            "other": count(notifications, notifications.c.status != "sent"),
        }
