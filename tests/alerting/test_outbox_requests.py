"""`dq outbox list|retry` (issue 28, acceptance 5): Slack's token was revoked, so an incident's
first Slack notice failed for good while email and PagerDuty were told; once the token is
fixed, `dq outbox retry --receiver slack` sends it, records the retry in the incident's event
log, and sends nothing else twice. `dq` runs in this process against the loopback stand-ins."""

from __future__ import annotations

from pathlib import Path

import pytest
import sqlalchemy as sa

from alerting import handle_outcome
from alerting.tables import incident_events, notifications
from scheduling.schema import project_database
from tests.alerting.conftest import PAGERDUTY_KEY, SLACK_TOKEN, T0, outcome
from tests.alerting.scenarios import EVERY_RECEIVER, E
from tests.alerting.servers import loopback_receivers_toml
from tests.scheduling import in_process


@pytest.fixture
def project(tmp_path, http, smtp, certificate, monkeypatch):
    """Two incidents routed to Slack, email and PagerDuty, and the environment of `dq`."""
    url = f"sqlite:///{tmp_path / 'dq.db'}"
    engine = project_database(url)
    for check in ("orders_total", "orders_customer"):
        handle_outcome(engine, outcome(E, check=check), EVERY_RECEIVER, T0)
    (tmp_path / "dq.toml").write_text(loopback_receivers_toml(http, smtp[0], timeout_s=10))
    monkeypatch.setenv("SSL_CERT_FILE", str(certificate[0]))
    monkeypatch.setenv("PAGERDUTY_ROUTING_KEY", PAGERDUTY_KEY)
    env = {
        "DQ_DATABASE_URL": url,
        "DQ_CONFIG": str(tmp_path / "dq.toml"),
        "DQ_STATE_DIR": str(tmp_path / "state"),
    }
    yield engine, env
    engine.dispose()


def dq(env: dict[str, str], *args: str):
    return in_process.dq(env, *args, cwd=Path(env["DQ_CONFIG"]).parent)


def statuses(engine: sa.Engine) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    with engine.connect() as connection:
        for receiver, status in connection.execute(
            sa.select(notifications.c.receiver, notifications.c.status).order_by(notifications.c.id)
        ):
            found.setdefault(receiver, []).append(status)
    return found


def test_a_failed_notification_is_sent_again_once_its_token_is_fixed(
    project, slack, smtp, pagerduty, monkeypatch
):
    engine, env = project
    monkeypatch.setenv("SLACK_BOT_TOKEN", "xoxb-revoked")
    assert dq(env, "deliver", "--at", T0.isoformat()).returncode == 0
    assert statuses(engine) == {
        "slack": ["failed", "failed"],
        "email": ["sent", "sent"],
        "pagerduty": ["sent", "sent"],
    }
    listed = dq(env, "outbox", "list", "--status", "failed")
    lines = listed.stdout.splitlines()
    assert len(lines) == 2 and all("failed   slack" in line for line in lines)
    assert all("invalid_auth" in line for line in lines)

    monkeypatch.setenv("SLACK_BOT_TOKEN", SLACK_TOKEN)  # the token is fixed
    retried = dq(env, "outbox", "retry", "--receiver", "slack", "--at", T0.isoformat())
    assert retried.returncode == 0, retried.stderr
    assert "2 failed notification(s) pending again" in retried.stdout
    assert statuses(engine) == {
        "slack": ["sent", "sent"],
        "email": ["sent", "sent"],
        "pagerduty": ["sent", "sent"],
    }
    assert len(slack.roots()) == 2  # told at last, each once
    assert len(smtp[1].messages) == 2 and len(pagerduty.events) == 2  # nothing else twice
    with engine.connect() as connection:
        events = connection.execute(
            sa.select(incident_events.c.action, incident_events.c.source, incident_events.c.detail)
        ).all()
    assert [(a, s) for a, s, _ in events] == [("retry", "cli"), ("retry", "cli")]
    assert all("it had failed: " in detail and "invalid_auth" in detail for *_, detail in events)
    assert "0 failed notification(s) pending again" in dq(env, "outbox", "retry").stdout
    assert dq(env, "outbox", "list").stdout.strip() == "no pending or failed notification"
