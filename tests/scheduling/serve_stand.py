"""The real `dq serve` process on loopback for the serve tests: its dq.toml (Slack and PagerDuty
receivers pointed at the stand-ins, the policy the tests record outcomes with), its environment
(the signing secret among it), started on a free port and waited on through /healthz; and
requests signed as Slack signs them."""

from __future__ import annotations

import datetime as dt
import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlencode

import httpx
from slack_sdk.signature import SignatureVerifier

from alerting import EscalationPolicy
from alerting.receivers import PagerDutyReceiver, SlackReceiver
from checkers import AlertLevel
from tests.alerting.conftest import PAGERDUTY_KEY, SLACK_TOKEN
from tests.polling import wait_for

REPO = Path(__file__).resolve().parents[2]
SIGNING_SECRET = "8f742231b10e8888abcd99yyyzzz85a5"  # a test secret, as Slack's look
HOUR = dt.timedelta(hours=1)
W, E = AlertLevel.WARNING, AlertLevel.ERROR
#: Slack hears everything, PagerDuty ERROR and up; an hour open escalates one level.
POLICY = EscalationPolicy(
    routes={"slack": W, "pagerduty": E}, escalate_after=HOUR, repeat_every=dt.timedelta(0)
)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def receivers(http: str) -> dict:
    """The receivers `dq serve` builds from its dq.toml, for the test's own runs."""
    return {
        "slack": SlackReceiver("slack", "C0DQ", base_url=f"{http}/api/", timeout_s=10),
        "pagerduty": PagerDutyReceiver("pagerduty", url=f"{http}/v2/enqueue", timeout_s=10),
    }


def serve_env(directory: Path, url: str, http: str) -> dict[str, str]:
    config = directory / "dq.toml"
    config.write_text(
        f"""
[receivers.slack]
type = "slack"
channel = "C0DQ"
base_url = "{http}/api/"
timeout_s = 10

[receivers.pagerduty]
type = "pagerduty"
url = "{http}/v2/enqueue"
timeout_s = 10

[policies.default]
routes = {{ slack = "WARNING", pagerduty = "ERROR" }}
escalate_after_minutes = 60
repeat_every_minutes = 0
"""
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DQ_", "SLACK", "PAGERDUTY"))}
    env.update(
        PYTHONPATH=str(REPO),
        DQ_DATABASE_URL=url,
        DQ_CONFIG=str(config),
        DQ_STATE_DIR=str(directory / "state"),
        SLACK_BOT_TOKEN=SLACK_TOKEN,
        PAGERDUTY_ROUTING_KEY=PAGERDUTY_KEY,
        SLACK_SIGNING_SECRET=SIGNING_SECRET,
    )
    return env


@dataclass
class Server:
    url: str
    process: subprocess.Popen[str]
    log: Path

    def get(self, path: str) -> httpx.Response:
        return httpx.get(self.url + path, timeout=30)

    def post_signed(
        self,
        path: str,
        fields: dict[str, str],
        *,
        age_s: float = 0.0,
        secret: str = SIGNING_SECRET,
        body: bytes | None = None,
        headers: dict[str, str] | None = None,
    ) -> httpx.Response:
        """POST `fields` form-encoded, signed with `secret` at a timestamp `age_s` ago; `body`
        replaces the signed body (a replay with a changed body)."""
        signed = urlencode(fields).encode()
        timestamp = str(int(time.time() - age_s))
        signature = SignatureVerifier(secret).generate_signature(timestamp=timestamp, body=signed)
        sent_headers = {
            "Content-Type": "application/x-www-form-urlencoded",
            "X-Slack-Request-Timestamp": timestamp,
            "X-Slack-Signature": str(signature),
            **(headers or {}),
        }
        return httpx.post(
            self.url + path,
            content=body if body is not None else signed,
            headers=sent_headers,
            timeout=30,
        )


@contextmanager
def dq_serve(env: dict[str, str], directory: Path) -> Iterator[Server]:
    """`dq serve` on a free loopback port, once /healthz answers; stopped afterwards."""
    port = free_port()
    log = directory / "serve.log"
    with log.open("w") as sink:
        process = subprocess.Popen(
            [sys.executable, "-m", "scheduling.cli", "serve", "--port", str(port)],
            env=env,
            cwd=directory,
            stdout=sink,
            stderr=subprocess.STDOUT,
            text=True,
        )
    server = Server(f"http://127.0.0.1:{port}", process, log)

    def healthy() -> bool:
        assert process.poll() is None, log.read_text()
        try:
            return server.get("/healthz").status_code == 200
        except httpx.TransportError:
            return False

    try:
        wait_for(healthy, "dq serve's /healthz", timeout=60)
        yield server
    finally:
        process.terminate()
        process.wait(timeout=30)


def block_actions(
    action_id: str,
    value: str,
    *,
    user: tuple[str, str],
    message_ts: str,
    response_url: str,
    action_ts: str = "1700000123.000100",
) -> dict[str, str]:
    """The form Slack posts when someone clicks a button on a message, or picks an option of
    its snooze menu (a static_select: the choice in `selected_option`, no `value`)."""
    element: dict[str, object] = {"type": "button", "value": value}
    if action_id == "snooze":
        element = {
            "type": "static_select",
            "selected_option": {"text": {"type": "plain_text", "text": value}, "value": value},
        }
    payload = {
        "type": "block_actions",
        "user": {"id": user[0], "username": user[1], "name": user[1], "team_id": "T0DQ"},
        "api_app_id": "A0DQ",
        "token": "deprecated-verification-token",
        "container": {
            "type": "message",
            "message_ts": message_ts,
            "channel_id": "C0DQ",
            "is_ephemeral": False,
        },
        "trigger_id": f"1337.42.{action_ts}",
        "team": {"id": "T0DQ", "domain": "example"},
        "channel": {"id": "C0DQ", "name": "data-quality"},
        "message": {"type": "message", "ts": message_ts, "text": "[DQ] FAILED"},
        "response_url": response_url,
        "actions": [
            {
                "action_id": action_id,
                "block_id": f"dq_triage_{value.partition(':')[0]}",
                **element,
                "action_ts": action_ts,
            }
        ],
    }
    return {"payload": json.dumps(payload)}


def view_submission(view: dict, *, user: tuple[str, str], values: dict) -> dict[str, str]:
    """The form Slack posts when someone submits a modal `view` (as views.open got it)."""
    payload = {
        "type": "view_submission",
        "team": {"id": "T0DQ", "domain": "example"},
        "user": {"id": user[0], "username": user[1], "name": user[1], "team_id": "T0DQ"},
        "api_app_id": "A0DQ",
        "trigger_id": "1337.43.view",
        "view": {
            "id": view["id"],
            "type": "modal",
            "callback_id": view["callback_id"],
            "private_metadata": view["private_metadata"],
            "hash": "1700000200.abc",
            "state": {"values": values},
        },
    }
    return {"payload": json.dumps(payload)}


@contextmanager
def response_urls() -> Iterator[tuple[str, list[dict]]]:
    """A loopback stand-in for Slack's response_url: the JSON messages posted to it."""
    got: list[dict] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            got.append(json.loads(self.rfile.read(length) or b"{}"))
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/response", got
    finally:
        server.shutdown()
        server.server_close()
