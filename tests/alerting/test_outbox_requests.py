"""`dq outbox list|retry` (issue 28, acceptance 5): Slack's token was revoked, so an incident's
first Slack notice failed for good while email and PagerDuty were told; once the token is
fixed, `dq outbox retry --receiver slack` sends it, records the retry in the incident's event
log, and sends nothing else twice. `dq` runs in this process against the loopback stand-ins."""

from __future__ import annotations

import pytest
import sqlalchemy as sa

from alerting.tables import incident_events, notifications
from tests.alerting.conftest import PAGERDUTY_KEY
from tests.alerting.outbox_faults import (
    retried_once_the_token_is_fixed,
    two_incidents_told_everywhere,
)


@pytest.fixture
def project(tmp_path, http, smtp, certificate, monkeypatch):
    """Two incidents routed to Slack, email and PagerDuty, and the environment of `dq`."""
    engine, env = two_incidents_told_everywhere(tmp_path, http, smtp[0])
    monkeypatch.setenv("SSL_CERT_FILE", str(certificate[0]))
    monkeypatch.setenv("PAGERDUTY_ROUTING_KEY", PAGERDUTY_KEY)
    yield engine, env
    engine.dispose()


def statuses(engine: sa.Engine) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    with engine.connect() as connection:
        for receiver, status in connection.execute(
            sa.select(notifications.c.receiver, notifications.c.status).order_by(notifications.c.id)
        ):
            found.setdefault(receiver, []).append(status)
    return found


def test_a_failed_notification_is_sent_again_once_its_token_is_fixed(
    project, slack, smtp, pagerduty
):
    engine, env = project
    steps = retried_once_the_token_is_fixed(env)
    assert next(steps).returncode == 0  # `dq deliver` with the token revoked
    assert statuses(engine) == {
        "slack": ["failed", "failed"],
        "email": ["sent", "sent"],
        "pagerduty": ["sent", "sent"],
    }
    listed = next(steps)
    lines = listed.stdout.splitlines()
    assert len(lines) == 2 and all("failed   slack" in line for line in lines)
    assert all("invalid_auth" in line for line in lines)

    retried = next(steps)  # the token fixed: `dq outbox retry --receiver slack`
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
    assert "0 failed notification(s) pending again" in next(steps).stdout
    assert next(steps).stdout.strip() == "no pending or failed notification"
