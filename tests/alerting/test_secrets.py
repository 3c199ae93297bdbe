"""Secrets stay out of messages: a secret pasted where a variable name belongs is refused without
being echoed, and a delivery that cannot read its secret records why without the value."""

from __future__ import annotations

import logging
import traceback

import pytest
import sqlalchemy as sa

from alerting import EscalationPolicy, deliver_pending, handle_outcome, load_config
from alerting.receivers import EmailReceiver, PagerDutyReceiver, SlackReceiver
from alerting.tables import notifications
from checkers import AlertLevel
from tests.alerting.conftest import T0, outcome

PASTED = "xoxb-1234567890-pasted-by-mistake"


def _everything_about(exc: BaseException) -> str:
    """All an operator could see of `exc`: message, repr, chained causes and the traceback."""
    return "".join(traceback.format_exception(exc)) + repr(exc)


#: An email receiver's options, but for its password's variable.
EMAIL = (
    'type = "email"\nhost = "h"\nsender = "a@b.c"\nrecipients = ["d@e.f"]\n'
    'username_env = "SMTP_USER"\n'
)


def _dq_toml(tmp_path, monkeypatch, receiver: str):
    """A dq.toml with the one receiver `team` (SMTP_USER set, for the email receivers)."""
    monkeypatch.setenv("SMTP_USER", "dq")
    path = tmp_path / "dq.toml"
    path.write_text(f"[receivers.team]\n{receiver}\n")
    return path


@pytest.mark.parametrize(
    ("build", "option"),
    [
        (lambda: SlackReceiver("slack", "C1", token_env=PASTED), "token_env"),
        (lambda: PagerDutyReceiver("pd", routing_key_env=PASTED), "routing_key_env"),
        (
            lambda: EmailReceiver(
                "mail", host="h", sender="a@b.c", recipients=["d@e.f"], username_env=PASTED
            ),
            "username_env",
        ),
        (
            lambda: EmailReceiver(
                "mail",
                host="h",
                sender="a@b.c",
                recipients=["d@e.f"],
                username_env="SMTP_USER",
                password_env=PASTED,
            ),
            "password_env",
        ),
    ],
    ids=["slack", "pagerduty", "email-username", "email-password"],
)
def test_receiver_refuses_a_secret_in_an_env_option_without_echoing_it(build, option):
    with pytest.raises(ValueError, match=f"{option} must name an environment variable") as raised:
        build()
    assert PASTED not in _everything_about(raised.value)
    assert "xoxb" not in str(raised.value)


@pytest.mark.parametrize(
    "receiver",
    [
        f'type = "slack"\nchannel = "C1"\ntoken_env = "{PASTED}"',
        f'type = "pagerduty"\nrouting_key_env = "{PASTED}"',
        f'{EMAIL}password_env = "Bearer {PASTED}"',
        # an option no receiver knows is still checked before anything can echo it
        f'type = "file"\npath = "alerts.jsonl"\napi_key_env = "{PASTED}"',
        'type = "slack"\nchannel = "C1"\ntoken_env = 12345678',
    ],
    ids=["slack", "pagerduty", "email", "unknown-option", "not-a-string"],
)
def test_dq_toml_with_a_secret_in_an_env_option_is_refused_without_echoing_it(
    tmp_path, receiver, monkeypatch
):
    path = _dq_toml(tmp_path, monkeypatch, receiver)
    with pytest.raises(ValueError, match=r"receiver 'team' in dq.toml: \w+_env must name") as err:
        load_config(path)
    assert PASTED not in _everything_about(err.value) and "12345678" not in str(err.value)


#: Secrets that look like variable names: a PagerDuty integration key, an alphanumeric password.
LOOKS_LIKE_A_NAME = ["R0a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d", "Summer2026Password"]


@pytest.mark.parametrize(
    "receiver",
    [
        f'type = "pagerduty"\nrouting_key_env = "{LOOKS_LIKE_A_NAME[0]}"',
        f'{EMAIL}password_env = "{LOOKS_LIKE_A_NAME[1]}"',
    ],
    ids=["pagerduty-key", "password"],
)
def test_a_secret_that_looks_like_a_name_is_refused_unless_such_a_variable_is_set(
    tmp_path, receiver, monkeypatch
):
    path = _dq_toml(tmp_path, monkeypatch, receiver)
    with pytest.raises(ValueError, match=r"\w+_env names no environment variable set") as err:
        load_config(path)
    assert not any(secret in _everything_about(err.value) for secret in LOOKS_LIKE_A_NAME)
    for secret in LOOKS_LIKE_A_NAME:  # a variable of that name set: it is a name after all
        monkeypatch.setenv(secret, "value")
    assert "team" in load_config(path).receivers


def test_valid_env_names_are_accepted(tmp_path, monkeypatch):
    monkeypatch.setenv("_DQ_SLACK_2", "xoxb-set")
    path = tmp_path / "dq.toml"
    path.write_text('[receivers.s]\ntype = "slack"\nchannel = "C1"\ntoken_env = "_DQ_SLACK_2"\n')
    assert load_config(path).receivers["s"].token_env == "_DQ_SLACK_2"  # type: ignore[attr-defined]
    with pytest.raises(ValueError, match="token_env must name"):
        SlackReceiver("s", "C1", token_env="2FAST")
    with pytest.raises(ValueError, match="at most 128"):
        SlackReceiver("s", "C1", token_env="A" * 129)


def _last_errors(engine) -> dict[str, str]:
    with engine.connect() as connection:
        rows = connection.execute(sa.select(notifications.c.receiver, notifications.c.last_error))
        return {receiver: error for receiver, error in rows}


def test_unreadable_secrets_are_recorded_without_their_value(
    engine, http, slack, monkeypatch, caplog
):
    """A token with a line break inside (a multi-line paste, a mounted file) is rejected by the
    HTTP client with a message quoting the header: it must not reach last_error or the log. A
    missing variable is told by its option, and nothing else."""
    broken = "xoxb-first-half\nsecond-half-of-token"
    monkeypatch.setenv("DQ_TEST_SLACK_TOKEN", broken)
    monkeypatch.delenv("DQ_TEST_NO_TOKEN", raising=False)
    receivers = {
        "slack": SlackReceiver(
            "slack", "C1", token_env="DQ_TEST_SLACK_TOKEN", base_url=f"{http}/api/"
        ),
        "unset": SlackReceiver(
            "unset", "C1", token_env="DQ_TEST_NO_TOKEN", base_url=f"{http}/api/"
        ),
    }
    policy = EscalationPolicy(routes={"slack": AlertLevel.ERROR, "unset": AlertLevel.ERROR})
    caplog.set_level(logging.INFO)
    handle_outcome(engine, outcome(AlertLevel.ERROR), policy, T0)
    report = deliver_pending(engine, receivers, T0, sleep=lambda s: None)
    assert not report.sent and not slack.calls
    errors = _last_errors(engine)
    assert "named by token_env" in errors["slack"] and "line break" in errors["slack"]
    assert errors["unset"] == "the environment variable named by token_env (Slack token) is not set"
    assert "DQ_TEST_NO_TOKEN" not in errors["unset"]  # the name may be a pasted secret
    everything = " ".join(errors.values()) + caplog.text
    for secret_part in ("xoxb-first-half", "second-half-of-token"):
        assert secret_part not in everything
