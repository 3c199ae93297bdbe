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


def test_config_builds_receivers_policies_and_silences(tmp_path, monkeypatch):
    monkeypatch.setenv("SLACK_BOT_TOKEN", "xoxb-test")  # a *_env must name a variable set here
    monkeypatch.setenv("PAGERDUTY_ROUTING_KEY", "key")
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
        ("[failing_row]\nbase_url = 'https://x'\n", "unknown key 'failing_row' in the top level"),
        (
            '[receivers.s]\ntype = "slack"\nchannel = "C1"\nbase_ulr = "http://x/api/"\n',
            "unknown key 'base_ulr' in [receivers.s] (type 'slack'); did you mean 'base_url'?",
        ),
        (
            '[receivers.m]\ntype = "email"\nhost = "h"\nsender = "a@b.c"\n'
            'recipients = ["d@e.f"]\nca_flie = "ca.pem"\n',
            "unknown key 'ca_flie' in [receivers.m] (type 'email'); did you mean 'ca_file'?",
        ),
        ('[receivers.c]\ntype = "console"\npath = "x"\n', "it takes no options"),
        ("[policies.default]\nescalate_after_run = 4\n", "did you mean 'escalate_after_runs'?"),
        (
            '[[silences]]\ncheck = "a"\nstarts_at = 2026-11-22T00:00:00Z\n'
            'ends_at = 2026-11-23T00:00:00Z\ncomments = "x"\n',
            "unknown key 'comments' in [[silences]]; did you mean 'comment'?",
        ),
        ('[failing_rows]\nbaseurl = "https://x"\n', "did you mean 'base_url'?"),
        ('[failing_rows]\nbase_url = "ftp://x/rows"\n', "must be an http(s) URL"),
        ('[policies.default]\nroutes = { console = "loud" }\n', "needs a level (WARNING"),
        ('[[silences]]\ncheck = "a"\n', "needs starts_at, ends_at"),
        ('[policies.default]\ngroup_by = "owner"\n', "group_by takes a list of owner, tag, source"),
        ('[policies.default]\ngroup_by = ["team"]\n', 'e.g. group_by = ["owner"]; got'),
    ],
)
def test_config_errors_are_refused_by_name(tmp_path, text, message):
    path = tmp_path / "dq.toml"
    path.write_text(text)
    with pytest.raises(ValueError) as refused:
        load_config(path)
    assert message in str(refused.value)
    assert "unknown key" not in message or "docs/configuration.md" in str(refused.value)


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


def test_missing_secret_is_a_permanent_failure_naming_the_option(monkeypatch):
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
    assert not delivery.ok and not delivery.retryable
    # the option, never the name given in it: that may be a pasted secret
    assert "named by token_env" in delivery.error and "NO_TOKEN_HERE" not in delivery.error


def test_policies_route_to_built_in_receivers_without_declaring_them(tmp_path):
    path = tmp_path / "dq.toml"
    path.write_text('[policies.quiet]\nroutes = { console = "warning", file = "error" }\n')
    policy = load_config(path).policy("quiet")
    assert policy.routes == {"console": AlertLevel.WARNING, "file": AlertLevel.ERROR}
    path.write_text('[policies.default]\nroutes = { slack = "error" }\n')
    with pytest.raises(ValueError, match="routes to unknown receiver 'slack'"):
        load_config(path)  # no Slack in the file, and none from the environment here
    assert load_config(path, known_receivers=["slack"]).policy().routes == {
        "slack": AlertLevel.ERROR
    }


def test_settings_route_a_policy_to_console_and_to_receivers_built_from_the_environment(
    tmp_path, monkeypatch
):
    from scheduling.settings import Settings

    monkeypatch.chdir(tmp_path)  # relative paths in dq.toml: from where dq runs
    monkeypatch.setenv("DQ_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("SLACK_BOT_TOKEN", "xoxb-test")
    monkeypatch.setenv("DQ_SLACK_CHANNEL", "C0DQ")
    monkeypatch.delenv("DQ_FAILING_ROWS_URL", raising=False)
    monkeypatch.delenv("DQ_FAILING_ROWS_DIR", raising=False)
    path = tmp_path / "dq.toml"
    path.write_text(
        '[policies.default]\nroutes = { console = "warning", slack = "critical" }\n'
        "escalate_after_runs = 2\n\n"
        '[failing_rows]\ndirectory = "published/failing"\n'
        'base_url = "https://dq.example.com/failing/"\n'
    )
    settings = Settings.from_environment(
        database_url=f"sqlite:///{tmp_path / 'dq.db'}", config_path=path
    )
    assert settings.default_policy.routes == {
        "console": AlertLevel.WARNING,
        "slack": AlertLevel.CRITICAL,
    }
    assert {"console", "file", "slack"} <= set(settings.receivers)
    rows = settings.failing_rows
    assert rows is not None and rows.directory == tmp_path / "published" / "failing"
    assert rows.link("orders/x.jsonl") == "https://dq.example.com/failing/orders/x.jsonl"
    assert rows.label == "failing rows"

    monkeypatch.setenv("DQ_FAILING_ROWS_URL", "https://rows.example.com/dq")
    monkeypatch.setenv("DQ_FAILING_ROWS_DIR", str(tmp_path / "elsewhere"))
    again = Settings.from_environment(
        database_url=f"sqlite:///{tmp_path / 'dq.db'}", config_path=path
    ).failing_rows
    assert again is not None and again.directory == tmp_path / "elsewhere"  # the environment wins
    assert again.link("orders/x.jsonl") == "https://rows.example.com/dq/orders/x.jsonl"


def test_failing_rows_links_say_when_they_are_local_files(tmp_path):
    from alerting.failing_rows import failing_rows_link

    local = FailingRowsLog(tmp_path / "failing")
    relative = local.save(outcome(AlertLevel.ERROR), T0)
    assert relative == "orders_have_customers/20261122T060000Z.jsonl"
    assert local.link(relative).startswith("file://")
    assert "a file on" in local.label and "DQ_FAILING_ROWS_URL" in local.label
    # a report beside the directory links to the rows relatively, published or not
    report = tmp_path / "site"
    assert local.link(relative, start=report) == f"../failing/{relative}"
    assert (
        failing_rows_link(
            relative, directory=tmp_path / "failing", base_url="https://dq.example.com/f"
        )
        == f"https://dq.example.com/f/{relative}"
    )
