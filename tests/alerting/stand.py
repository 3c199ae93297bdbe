"""The loopback stand outside pytest: Slack, PagerDuty and SMTP stand-ins with in-process
receivers pointed at them (conftest.py's fixtures build the same pieces one by one), for the
scenarios benchmarks.faults runs."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from alerting.receivers import Receiver
from tests.alerting.conftest import PAGERDUTY_KEY, SLACK_TOKEN
from tests.alerting.servers import (
    Mailbox,
    PagerDutyStandIn,
    SlackStandIn,
    http_server,
    loopback_receivers,
    self_signed_certificate,
    smtp_server,
)


@dataclass
class Stand:
    slack: SlackStandIn
    pagerduty: PagerDutyStandIn
    mailbox: Mailbox
    http: str
    smtp_port: int
    cert: Path
    receivers: dict[str, Receiver]


@contextmanager
def loopback_stand(directory: Path, *, delay_s: float = 0.0) -> Iterator[Stand]:
    """Fresh stand-ins, each answering after `delay_s`, and receivers for them; the receivers'
    secrets are put in this process's environment."""
    os.environ.update(SLACK_BOT_TOKEN=SLACK_TOKEN, PAGERDUTY_ROUTING_KEY=PAGERDUTY_KEY)
    cert, key = self_signed_certificate(directory)
    slack, pagerduty = SlackStandIn(SLACK_TOKEN, delay_s=delay_s), PagerDutyStandIn(delay_s=delay_s)
    with (
        http_server(slack, pagerduty) as http,
        smtp_server(cert, key, delay_s=delay_s) as (port, mailbox),
    ):
        receivers = loopback_receivers(http, port, cert)
        yield Stand(slack, pagerduty, mailbox, http, port, cert, receivers)
