"""dq.toml configuration, the failing-rows log and secrets."""

from __future__ import annotations

import datetime as dt
import json

import pytest

from alerting import FailingRowsLog, load_config
from alerting.receivers import PagerDutyReceiver, SlackReceiver
from checkers import AlertLevel
from tests.alerting.conftest import T0, outcome

CONFIG = """
[receivers.slack-dq]
type = "slack"
channel = "C0123DQ"
token_env = "SLACK_BOT_TOKEN"

[receivers.oncall]
type = "pagerduty"
routing_key_env = "PAGERDUTY_ROUTING_KEY"

[policies.default]
routes = { slack-dq = "warning", oncall = "CRITICAL" }
escalate_after_runs = 4
repeat_every_minutes = 60

[[silences]]
check = "flights_*"
starts_at = 2026-11-22T00:00:00Z
ends_at = 2026-11-23T00:00:00Z
comment = "reload"
"""


def test_config_builds_receivers_policies_and_silences(tmp_path):
    path = tmp_path / "dq.toml"
    path.write_text(CONFIG)
    config = load_config(path)
    assert isinstance(config.receivers["slack-dq"], SlackReceiver)
    assert isinstance(config.receivers["oncall"], PagerDutyReceiver)
    policy = config.policy()
    assert policy.routes == {"slack-dq": AlertLevel.WARNING, "oncall": AlertLevel.CRITICAL}
    assert policy.escalate_after_runs == 4 and policy.repeat_every == dt.timedelta(hours=1)
    [silence] = config.silences
    assert silence.mutes("flights_fresh", T0) and not silence.mutes("orders", T0)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[receivers.s]\ntype = "slack"\nchannel = "C1"\ntoken = "xoxb-1"\n', "token_env"),
        ('[receivers.s]\ntype = "pigeon"\n', "unknown receiver type"),
        ('[policies.default]\nroutes = { nobody = "ERROR" }\n', "unknown receiver"),
    ],
)
def test_config_errors(tmp_path, text, message):
    path = tmp_path / "dq.toml"
    path.write_text(text)
    with pytest.raises(ValueError, match=message):
        load_config(path)


def test_failing_rows_log_writes_the_sample_and_links_to_it(tmp_path):
    log = FailingRowsLog(tmp_path / "failing", base_url="https://dq.example.com/failing/")
    link = log.write(outcome(AlertLevel.ERROR), T0)
    assert link == "https://dq.example.com/failing/orders_have_customers/20261122T060000Z.jsonl"
    written = tmp_path / "failing" / "orders_have_customers" / "20261122T060000Z.jsonl"
    assert [json.loads(line) for line in written.read_text().splitlines()] == [
        {"customer_id": None, "order_id": 7}
    ]
    assert FailingRowsLog(tmp_path).write(outcome(None), T0) is None
    assert FailingRowsLog(tmp_path).write(outcome(AlertLevel.ERROR), T0).startswith("file://")


def test_missing_secret_is_a_permanent_failure_naming_the_variable(monkeypatch):
    from alerting import IncidentStatus, Notification, NotifyReason

    monkeypatch.delenv("NO_TOKEN_HERE", raising=False)
    n = Notification(
        1,
        "f" * 32,
        "slack",
        1,
        NotifyReason.NEW,
        AlertLevel.ERROR,
        IncidentStatus.OPEN,
        1,
        T0,
        T0,
        outcome(AlertLevel.ERROR),
    )
    delivery = SlackReceiver("slack", "C1", token_env="NO_TOKEN_HERE").send(n, {}, 0)
    assert not delivery.ok and not delivery.retryable and "NO_TOKEN_HERE" in delivery.error
