"""Acceptance: two `dq run --due` processes started at the same moment (a cron tick and a manual
run, a second apart) on one due, failing check, with Slack, PagerDuty and SMTP answering slowly,
on SQLite and on PostgreSQL: one evaluation, one incident, exactly one message per receiver; the
other run says it skipped the window."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import sqlalchemy as sa

from checkers.storage import claims, incidents, notifications, runs
from tests.alerting.conftest import PAGERDUTY_KEY, SLACK_TOKEN
from tests.alerting.servers import (
    PagerDutyStandIn,
    SlackStandIn,
    http_server,
    self_signed_certificate,
    smtp_server,
)
from tests.scheduling.databases import fresh_database

ROOT = Path(__file__).parents[2]
DELAY_S = 1.0  # every receiver answers after a second
GATED = [sys.executable, "-m", "tests.scheduling.gated_dq"]
TIMES = ["2026-11-22T07:00:00", "2026-11-22T07:00:01"]  # both windows start at 06:45


def _config(path: Path, http: str, smtp_port: int) -> Path:
    path.write_text(
        f"""
[receivers.slack]
type = "slack"
channel = "C0DQ"
base_url = "{http}/api/"

[receivers.email]
type = "email"
host = "127.0.0.1"
port = {smtp_port}
sender = "dq@example.com"
recipients = ["billing@example.com"]

[receivers.pagerduty]
type = "pagerduty"
url = "{http}/v2/enqueue"

[policies.default]
routes = {{ slack = "warning", email = "warning", pagerduty = "critical" }}
"""
    )
    return path


def _wait_for(paths: list[Path], processes: list[subprocess.Popen]) -> None:
    deadline = time.monotonic() + 120
    while not all(p.exists() for p in paths):
        dead = [p for p in processes if p.poll() is not None]
        if dead or time.monotonic() > deadline:
            raise AssertionError(f"runs not ready: {[p.communicate() for p in dead]}")
        time.sleep(0.05)


@pytest.mark.parametrize("kind", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def test_two_concurrent_due_runs_evaluate_record_and_alert_once(kind, tmp_path):
    cert, key = self_signed_certificate(tmp_path)
    slack, pagerduty = SlackStandIn(SLACK_TOKEN, delay_s=DELAY_S), PagerDutyStandIn(delay_s=DELAY_S)
    csv = tmp_path / "orders.csv"
    csv.write_text("order_id,customer\n1,10\n2,\n3,30\n")
    go = tmp_path / "go"
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
        ready = [tmp_path / f"ready-{i}" for i in range(2)]
        processes = [
            subprocess.Popen(
                [*GATED, str(ready[i]), str(go), "run", "--due", "--at", TIMES[i]],
                env=env,
                cwd=tmp_path,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for i in range(2)
        ]
        try:
            _wait_for(ready, processes)
            go.touch()  # both runs start now
            outputs = [p.communicate(timeout=300)[0] for p in processes]
        finally:
            for p in processes:
                p.kill()
                p.wait()
        engine = sa.create_engine(url)
        try:
            recorded = _counts(engine)
        finally:
            engine.dispose()

    codes = [p.returncode for p in processes]
    assert sorted(codes) == [0, 1], outputs  # the evaluating run failed the check, the other: 0
    winner, loser = (outputs[0], outputs[1]) if codes[0] == 1 else (outputs[1], outputs[0])
    assert "overlap_orders: CRITICAL, 1/3 failing" in winner
    assert "overlap_orders: CRITICAL" not in loser
    assert "overlap_orders: skipped, window (2026-11-22T06:45:00+00:00, " in loser
    assert recorded == {"runs": 1, "incidents": 1, "claims done": 1, "sent": 3, "other": 0}
    assert len(slack.messages) == 1 and len(slack.roots()) == 1
    assert [e["event_action"] for e in pagerduty.events] == ["trigger"]
    assert len(mailbox.messages) == 1


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
