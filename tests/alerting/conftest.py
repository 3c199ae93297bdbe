from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from pathlib import Path

import pytest

from alerting.receivers import PagerDutyReceiver, Receiver, SlackReceiver
from checkers import AlertLevel, CheckOutcome, Status
from scheduling.schema import project_database
from tests.alerting.servers import (
    PagerDutyStandIn,
    SlackStandIn,
    http_server,
    loopback_receivers,
    self_signed_certificate,
    smtp_server,
)

SLACK_TOKEN = "xoxb-test-0000-secret-token"
PAGERDUTY_KEY = "R0UTINGKEY0000000000000000000000"
T0 = dt.datetime(2026, 11, 22, 6, 0, tzinfo=dt.UTC)


def outcome(
    level: AlertLevel | None,
    *,
    check: str = "orders_have_customers",
    failing: int = 3,
    **changes: object,
) -> CheckOutcome:
    """A FAILED outcome at `level`, or PASSED when level is None."""
    if level is None:
        return CheckOutcome(
            check=check,
            status=Status.PASSED,
            total=120,
            description="Orders reference a customer.",
            **changes,
        )
    values = dict(
        check=check,
        status=Status.FAILED,
        level=level,
        failing=failing,
        total=120,
        unexcused=failing,
        description="Orders reference a customer, or invoicing breaks.",
        tolerance="fewer than 2 failing",
        owner="billing",
        sample=({"order_id": 7, "customer_id": None},),
        failing_keys=(7,),
    )
    values.update(changes)
    return CheckOutcome(**values)  # type: ignore[arg-type]


@pytest.fixture
def engine(tmp_path):
    return project_database(f"sqlite:///{tmp_path / 'dq.db'}")


@pytest.fixture(scope="session")
def certificate(tmp_path_factory) -> tuple[Path, Path]:
    return self_signed_certificate(tmp_path_factory.mktemp("tls"))


@pytest.fixture
def slack() -> SlackStandIn:
    return SlackStandIn(SLACK_TOKEN)


@pytest.fixture
def pagerduty() -> PagerDutyStandIn:
    return PagerDutyStandIn()


@pytest.fixture
def http(slack, pagerduty) -> Iterator[str]:
    with http_server(slack, pagerduty) as url:
        yield url


@pytest.fixture
def smtp(certificate):
    cert, key = certificate
    with smtp_server(cert, key) as (port, mailbox):
        yield port, mailbox


@pytest.fixture
def receivers(http, smtp, certificate, monkeypatch):
    monkeypatch.setenv("SLACK_BOT_TOKEN", SLACK_TOKEN)
    monkeypatch.setenv("PAGERDUTY_ROUTING_KEY", PAGERDUTY_KEY)
    return loopback_receivers(http, smtp[0], certificate[0])


@pytest.fixture
def paced_slack(http, slack, monkeypatch) -> dict[str, Receiver]:
    """Slack at the stand-in's one post a second, and PagerDuty answering at once."""
    monkeypatch.setenv("SLACK_BOT_TOKEN", SLACK_TOKEN)
    monkeypatch.setenv("PAGERDUTY_ROUTING_KEY", PAGERDUTY_KEY)
    slack.per_second = 1.0
    return {
        "slack": SlackReceiver("slack", "c0dq", base_url=f"{http}/api/"),
        "pagerduty": PagerDutyReceiver("pagerduty", url=f"{http}/v2/enqueue"),
    }
