"""The parts of `dq serve` that need no server: `dq slack-manifest`, `dq serve` refusing to start
without the signing secret or with a bad address, the listening address, and what the signature
check and the payload reader refuse."""

from __future__ import annotations

import json
import time

import pytest
from slack_sdk.signature import SignatureVerifier

from scheduling.cli import main
from scheduling.cli.exits import EXIT_OK, EXIT_USAGE
from scheduling.config import Config
from scheduling.serve import SlackSigning
from scheduling.serve.commands import BadCommand, parse_command
from scheduling.serve.interactions import (
    ActionRequest,
    BadInteraction,
    ExpectedSubmission,
    parse_interaction,
)
from tests.scheduling.serve_stand import SIGNING_SECRET, block_actions, free_port


def test_the_manifest_names_the_scopes_and_both_request_urls(capsys):
    assert main(["slack-manifest", "--url", "https://dq.example.com/triage/"]) == EXIT_OK
    manifest = json.loads(capsys.readouterr().out)
    assert manifest["display_information"]["name"] == "dq-checkers"
    assert {"chat:write", "commands"} <= set(manifest["oauth_config"]["scopes"]["bot"])
    interactivity = manifest["settings"]["interactivity"]
    assert interactivity == {
        "is_enabled": True,
        "request_url": "https://dq.example.com/triage/slack/actions",
    }
    [command] = manifest["features"]["slash_commands"]
    assert command["command"] == "/dq"
    assert command["url"] == "https://dq.example.com/triage/slack/commands"
    assert command["description"] and len(manifest["display_information"]["name"]) <= 35


@pytest.mark.parametrize("url", ["http://dq.example.com", "dq.example.com", "https://x/?a=1"])
def test_the_manifest_needs_an_https_url(url, capsys):
    assert main(["slack-manifest", "--url", url]) == EXIT_USAGE
    assert "https://" in capsys.readouterr().err


def test_serve_refuses_to_start_without_the_signing_secret(monkeypatch, tmp_path, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SLACK_SIGNING_SECRET", raising=False)
    monkeypatch.setenv("DQ_DATABASE_URL", f"sqlite:///{tmp_path / 'dq.db'}")
    assert main(["serve", "--port", str(free_port())]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert "SLACK_SIGNING_SECRET (Slack signing secret) is not set" in err
    assert "Signing Secret" in err
    assert not (tmp_path / "dq.db").exists()  # refused before anything was opened


def test_serve_refuses_a_bad_address(monkeypatch, capsys):
    monkeypatch.setenv("SLACK_SIGNING_SECRET", SIGNING_SECRET)
    monkeypatch.setenv("DQ_SERVE_ADDRESS", "8787")
    assert main(["serve"]) == EXIT_USAGE
    assert "DQ_SERVE_ADDRESS must be HOST:PORT" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("address", "expected"),
    [(None, ("127.0.0.1", 8787)), ("0.0.0.0:9000", ("0.0.0.0", 9000)), ("[::1]:80", ("::1", 80))],
)
def test_the_listening_address(address, expected):
    env = {} if address is None else {"DQ_SERVE_ADDRESS": address}
    assert Config.from_environment(env).serve_host_port() == expected


def _headers(body: bytes, *, timestamp: str | None = None) -> dict[str, str]:
    stamp = timestamp or str(int(time.time()))
    signature = SignatureVerifier(SIGNING_SECRET).generate_signature(timestamp=stamp, body=body)
    return {"x-slack-request-timestamp": stamp, "x-slack-signature": str(signature)}


def test_the_signature_check():
    signing = SlackSigning(SIGNING_SECRET)
    body = b"payload=%7B%7D"
    assert signing.verified(body, _headers(body))
    assert not signing.verified(body + b"x", _headers(body))
    assert not signing.verified(body, _headers(body, timestamp=str(int(time.time()) - 301)))
    assert not signing.verified(body, {**_headers(body), "x-slack-request-timestamp": "12a"})
    assert not signing.verified(body, {"x-slack-request-timestamp": str(int(time.time()))})
    latin = "payload=caf\xe9".encode("latin-1")
    assert not signing.verified(latin, _headers(body))


def test_a_click_is_read_with_its_request_key():
    form = block_actions(
        "snooze", "12:4h", user=("U1", "ana"), message_ts="1.2", response_url="https://h/1"
    )
    action = parse_interaction(form["payload"])
    assert isinstance(action, ActionRequest)
    assert (action.action, action.incident_id, action.user.name) == ("snooze", 12, "ana")
    assert action.snooze_for is not None and action.snooze_for.total_seconds() == 4 * 3600
    again = parse_interaction(form["payload"])
    assert isinstance(again, ActionRequest) and again.request_key == action.request_key


def _click(action_id: str, value: str) -> str:
    form = block_actions(action_id, value, user=("U1", "a"), message_ts="1", response_url="")
    return form["payload"]


@pytest.mark.parametrize(
    "payload",
    [
        "not json",
        "[]",
        json.dumps({"type": "shortcut"}),
        json.dumps({"type": "block_actions", "user": {"id": "U1"}, "actions": []}),
        _click("delete", "12"),
        _click("snooze", "12:3w"),
        _click("acknowledge", "12; drop"),
        json.dumps({"type": "view_submission", "user": {"id": "U1"}, "view": {"callback_id": "x"}}),
    ],
)
def test_what_the_payload_reader_refuses(payload):
    with pytest.raises(BadInteraction):
        parse_interaction(payload)


def test_the_expected_modal_is_read():
    payload = {
        "type": "view_submission",
        "user": {"id": "U1", "username": "ana"},
        "view": {
            "id": "V1",
            "callback_id": "dq_expected",
            "private_metadata": "7",
            "state": {
                "values": {
                    "reason": {"reason_input": {"value": "  backfill  "}},
                    "known_broken": {"known_broken_for": {"selected_option": {"value": "7d"}}},
                }
            },
        },
    }
    submission = parse_interaction(json.dumps(payload))
    assert isinstance(submission, ExpectedSubmission)
    assert (submission.incident_id, submission.reason) == (7, "backfill")
    assert submission.known_broken_for is not None and submission.known_broken_for.days == 7


@pytest.mark.parametrize("text", ["ack twelve", "snooze orders", "snooze orders soon", "delete x"])
def test_what_the_command_refuses(text):
    with pytest.raises(BadCommand):
        parse_command(text)


def test_the_commands():
    assert parse_command("").verb == "help"
    assert parse_command("ack #12").incident_id == 12
    snooze = parse_command("snooze orders_have_customers 4h")
    assert snooze.check == "orders_have_customers" and snooze.duration is not None
