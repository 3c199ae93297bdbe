"""Real servers on loopback for alerting tests: a Slack Web API stand-in (chat.postMessage and
chat.update, with programmable 429 and 500 answers), a PagerDuty Events API v2 endpoint, and an
SMTP server with STARTTLS (aiosmtpd) using a self-signed certificate the tests trust. Each can
answer slowly (`delay_s`: seconds before every answer, after the request is taken in)."""

from __future__ import annotations

import asyncio
import itertools
import json
import socket
import ssl
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from email import message_from_bytes
from email.message import Message
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from aiosmtpd.controller import Controller


@dataclass
class SlackMessage:
    channel: str
    ts: str
    text: str
    blocks: list[dict]
    thread_ts: str | None = None
    reply_broadcast: bool = False
    edits: list[dict] = field(default_factory=list)


class SlackStandIn:
    """Keeps messages like Slack does; `faults` is a queue of (status, retry_after) answers
    given instead of handling the next calls; `down` answers 500 to everything."""

    def __init__(self, token: str, *, delay_s: float = 0.0) -> None:
        self.token = token
        self.delay_s = delay_s
        self.messages: list[SlackMessage] = []
        self.calls: list[tuple[str, dict]] = []
        self.faults: list[tuple[int, str | None]] = []
        self.down = False
        self._ts = itertools.count(1)
        self._lock = threading.Lock()

    def handle(self, method: str, auth: str | None, body: dict) -> tuple[int, dict, dict]:
        with self._lock:
            if auth != f"Bearer {self.token}":
                return 200, {"ok": False, "error": "invalid_auth"}, {}
            if self.down:
                return 500, {"ok": False, "error": "internal_error"}, {}
            if self.faults:
                status, retry_after = self.faults.pop(0)
                headers = {"Retry-After": retry_after} if retry_after else {}
                return (
                    status,
                    {"ok": False, "error": "ratelimited" if status == 429 else "internal_error"},
                    headers,
                )
            self.calls.append((method, body))
            if method == "chat.postMessage":
                ts = f"1700000000.{next(self._ts):06d}"
                self.messages.append(
                    SlackMessage(
                        body["channel"].upper(),
                        ts,
                        body.get("text", ""),
                        body.get("blocks", []),
                        body.get("thread_ts"),
                        bool(body.get("reply_broadcast")),
                    )
                )
                return 200, {"ok": True, "channel": body["channel"].upper(), "ts": ts}, {}
            if method == "chat.update":
                target = next((m for m in self.messages if m.ts == body["ts"]), None)
                if target is None:
                    return 200, {"ok": False, "error": "message_not_found"}, {}
                target.edits.append(body)
                target.text, target.blocks = body.get("text", ""), body.get("blocks", [])
                return 200, {"ok": True, "channel": target.channel, "ts": target.ts}, {}
            return 200, {"ok": False, "error": "unknown_method"}, {}

    def roots(self) -> list[SlackMessage]:
        return [m for m in self.messages if m.thread_ts is None]

    def replies(self, root: SlackMessage) -> list[SlackMessage]:
        return [m for m in self.messages if m.thread_ts == root.ts]


class PagerDutyStandIn:
    def __init__(self, *, delay_s: float = 0.0) -> None:
        self.events: list[dict] = []
        self.faults: list[int] = []
        self.delay_s = delay_s

    def handle(self, body: dict) -> tuple[int, dict, dict]:
        if self.faults:
            return self.faults.pop(0), {"status": "error"}, {}
        if not body.get("routing_key") or body.get("event_action") not in (
            "trigger",
            "acknowledge",
            "resolve",
        ):
            return 400, {"status": "invalid event"}, {}
        self.events.append(body)
        return 202, {"status": "success", "dedup_key": body.get("dedup_key")}, {}


def _handler(slack: SlackStandIn | None, pagerduty: PagerDutyStandIn | None):
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            body = json.loads(raw) if raw else {}
            if self.path.startswith("/api/") and slack is not None:
                status, answer, headers = slack.handle(
                    self.path.removeprefix("/api/"), self.headers.get("Authorization"), body
                )
                time.sleep(slack.delay_s)  # a slow service: the request counts, the answer lags
            elif self.path == "/v2/enqueue" and pagerduty is not None:
                status, answer, headers = pagerduty.handle(body)
                time.sleep(pagerduty.delay_s)
            else:
                status, answer, headers = 404, {"error": "not found"}, {}
            data = json.dumps(answer).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for key, value in headers.items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: object) -> None:
            pass

    return Handler


@contextmanager
def http_server(
    slack: SlackStandIn | None = None, pagerduty: PagerDutyStandIn | None = None
) -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(slack, pagerduty))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def self_signed_certificate(directory: Path) -> tuple[Path, Path]:
    cert, key = directory / "cert.pem", directory / "key.pem"
    subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "2",
            "-subj",
            "/CN=localhost",
            "-addext",
            "subjectAltName=DNS:localhost,IP:127.0.0.1",
            "-keyout",
            str(key),
            "-out",
            str(cert),
        ],
        check=True,
        capture_output=True,
    )
    return cert, key


class _Mailbox:
    def __init__(self, delay_s: float = 0.0) -> None:
        self.messages: list[Message] = []
        self.tls: list[bool] = []
        self.delay_s = delay_s

    async def handle_DATA(self, server, session, envelope):
        self.messages.append(message_from_bytes(envelope.content))
        self.tls.append(session.ssl is not None)
        await asyncio.sleep(self.delay_s)
        return "250 OK"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextmanager
def smtp_server(cert: Path, key: Path, *, delay_s: float = 0.0) -> Iterator[tuple[int, _Mailbox]]:
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)
    mailbox = _Mailbox(delay_s)
    controller = Controller(
        mailbox, hostname="127.0.0.1", port=_free_port(), tls_context=context, require_starttls=True
    )
    controller.start()
    try:
        yield controller.port, mailbox
    finally:
        controller.stop()
