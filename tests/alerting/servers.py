"""Real servers on loopback for alerting tests: a Slack Web API stand-in (chat.postMessage,
chat.update, conversations.history/replies with message metadata; programmable 429 and 500
answers), a PagerDuty Events API v2 endpoint, and an SMTP server with STARTTLS (aiosmtpd) using a
self-signed certificate the tests trust. Gates hold a request at a chosen point (before or after
the server acted, before it answers) until the test releases it, so a test can kill the client
at exactly that point. Each can answer slowly (`delay_s`: seconds before every answer, after the
request is taken in). `loopback_receivers` builds the receivers that talk to them."""

from __future__ import annotations

import asyncio
import itertools
import json
import math
import socket
import ssl
import subprocess
import threading
import time
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from email import message_from_bytes
from email.message import Message
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from aiosmtpd.controller import Controller

from alerting.receivers import EmailReceiver, PagerDutyReceiver, Receiver, SlackReceiver


@dataclass
class SlackMessage:
    channel: str
    ts: str
    text: str
    blocks: list[dict]
    thread_ts: str | None = None
    reply_broadcast: bool = False
    edits: list[dict] = field(default_factory=list)
    metadata: dict | None = None


@dataclass
class Gate:
    """Holds up to `times` requests reaching `point` until `release` is set; `reached` is set
    as soon as one is held."""

    point: str
    times: int = 1
    reached: threading.Event = field(default_factory=threading.Event)
    release: threading.Event = field(default_factory=threading.Event)


class Gates:
    """The gates of one server. Points: "<method>:before" (request read, nothing done yet),
    "<method>:after" (done and stored, answer not yet sent), "DATA" (a mail stored)."""

    def __init__(self) -> None:
        self._gates: list[Gate] = []
        self._lock = threading.Lock()

    def add(self, point: str, *, times: int = 1) -> Gate:
        gate = Gate(point, times)
        with self._lock:
            self._gates.append(gate)
        return gate

    def passing(self, point: str) -> None:
        with self._lock:
            gate = next((g for g in self._gates if g.point == point and g.times > 0), None)
            if gate is not None:
                gate.times -= 1
        if gate is not None:
            gate.reached.set()
            gate.release.wait(timeout=60)

    def release_all(self) -> None:
        with self._lock:
            for gate in self._gates:
                gate.release.set()


class SlackStandIn:
    """Keeps messages like Slack does; `faults` is a queue of (status, retry_after) answers
    given instead of handling the next calls; `down` answers 500 to everything, and
    `rate_limited` (a Retry-After value) answers 429 to everything; `per_second` takes that
    many posts a second, as Slack does per channel, and answers 429 to posts sooner."""

    def __init__(
        self, token: str, *, delay_s: float = 0.0, per_second: float | None = None
    ) -> None:
        self.token = token
        self.delay_s = delay_s
        self.per_second = per_second
        self._last_post = -math.inf
        self.messages: list[SlackMessage] = []
        self.views: list[dict] = []  # modals opened with views.open
        self.calls: list[tuple[str, dict]] = []
        self.faults: list[tuple[int, str | None]] = []
        self.down = False
        self.rate_limited: str | None = None
        self.refused = 0  # calls answered 429 or 500
        self.gates = Gates()
        self._ts = itertools.count(1)
        self._lock = threading.Lock()

    def _too_soon(self) -> bool:
        if self.per_second is None:
            return False
        now = time.monotonic()
        if now - self._last_post < 1 / self.per_second:
            return True
        self._last_post = now
        return False

    def handle(self, method: str, auth: str | None, body: dict) -> tuple[int, dict, dict]:
        with self._lock:
            if auth != f"Bearer {self.token}":
                return 200, {"ok": False, "error": "invalid_auth"}, {}
            if self.down:
                self.refused += 1
                return 500, {"ok": False, "error": "internal_error"}, {}
            if self.rate_limited is not None:
                self.refused += 1
                return (
                    429,
                    {"ok": False, "error": "ratelimited"},
                    {"Retry-After": self.rate_limited},
                )
            if self.faults:
                status, retry_after = self.faults.pop(0)
                headers = {"Retry-After": retry_after} if retry_after else {}
                return (
                    status,
                    {"ok": False, "error": "ratelimited" if status == 429 else "internal_error"},
                    headers,
                )
            if method.startswith("chat.") and self._too_soon():
                self.refused += 1
                return 429, {"ok": False, "error": "ratelimited"}, {"Retry-After": "1"}
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
                        metadata=body.get("metadata"),
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
            if method == "conversations.history":  # top-level messages, newest first
                found = [
                    m
                    for m in self.messages
                    if m.channel == body["channel"].upper()
                    and (m.thread_ts is None or m.reply_broadcast)
                ]
                return 200, self._listing(found[::-1], body), {}
            if method == "conversations.replies":  # the parent, then its replies, oldest first
                found = [
                    m
                    for m in self.messages
                    if m.channel == body["channel"].upper() and body["ts"] in (m.ts, m.thread_ts)
                ]
                if not found:
                    return 200, {"ok": False, "error": "thread_not_found"}, {}
                return 200, self._listing(found, body), {}
            if method == "views.open":  # a modal (triage's "expected" reason), kept as given
                if isinstance(body.get("view"), str):  # form-encoded: the view as JSON text
                    body = {**body, "view": json.loads(body["view"])}
                if not body.get("trigger_id") or not isinstance(body.get("view"), dict):
                    return 200, {"ok": False, "error": "invalid_arguments"}, {}
                view_id = f"V{next(self._ts):08d}"
                self.views.append({**body["view"], "id": view_id, "trigger_id": body["trigger_id"]})
                return 200, {"ok": True, "view": {**body["view"], "id": view_id}}, {}
            return 200, {"ok": False, "error": "unknown_method"}, {}

    @staticmethod
    def _listing(found: list[SlackMessage], params: dict) -> dict:
        metadata = params.get("include_all_metadata") in ("1", "true", True)
        messages = []
        for m in found[: int(params.get("limit") or 100)]:
            message: dict = {"type": "message", "ts": m.ts, "text": m.text}
            if m.thread_ts:
                message["thread_ts"] = m.thread_ts
            if metadata and m.metadata:
                message["metadata"] = m.metadata
            messages.append(message)
        return {"ok": True, "messages": messages, "has_more": False}

    def roots(self) -> list[SlackMessage]:
        return [m for m in self.messages if m.thread_ts is None]

    def replies(self, root: SlackMessage) -> list[SlackMessage]:
        return [m for m in self.messages if m.thread_ts == root.ts]


class PagerDutyStandIn:
    def __init__(self, *, delay_s: float = 0.0) -> None:
        self.events: list[dict] = []
        self.faults: list[int] = []
        self.gates = Gates()
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
        def do_GET(self) -> None:
            url = urllib.parse.urlsplit(self.path)
            params = dict(urllib.parse.parse_qsl(url.query))
            self._serve(url.path, params)

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            url = urllib.parse.urlsplit(self.path)
            body = dict(urllib.parse.parse_qsl(url.query))
            if "json" in (self.headers.get("Content-Type") or ""):
                body.update(json.loads(raw) if raw else {})
            else:  # form-encoded, as slack_sdk sends read methods' arguments
                body.update(urllib.parse.parse_qsl(raw.decode()))
            self._serve(url.path, body)

        def _serve(self, path: str, body: dict) -> None:
            if path.startswith("/api/") and slack is not None:
                method, gates = path.removeprefix("/api/"), slack.gates
                gates.passing(f"{method}:before")
                status, answer, headers = slack.handle(
                    method, self.headers.get("Authorization"), body
                )
                time.sleep(slack.delay_s)  # a slow service: the request counts, the answer lags
            elif path == "/v2/enqueue" and pagerduty is not None:
                method, gates = "enqueue", pagerduty.gates
                gates.passing(f"{method}:before")
                status, answer, headers = pagerduty.handle(body)
                time.sleep(pagerduty.delay_s)
            else:
                method, gates = "", Gates()
                status, answer, headers = 404, {"error": "not found"}, {}
            gates.passing(f"{method}:after")
            data = json.dumps(answer).encode()
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for key, value in headers.items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(data)
            except OSError:  # the client was killed or gave up while the request was held
                pass

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
        for stand_in in (slack, pagerduty):
            if stand_in is not None:
                stand_in.gates.release_all()
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


class Mailbox:
    def __init__(self, delay_s: float = 0.0) -> None:
        self.messages: list[Message] = []
        self.tls: list[bool] = []
        self.peers: list[object] = []  # each mail's client address: one per SMTP connection
        self.refusing = 0  # the next mails answered 451
        self.gates = Gates()
        self.delay_s = delay_s

    async def handle_DATA(self, server, session, envelope):
        if self.refusing:  # a transient refusal of this mail (the session stays open)
            self.refusing -= 1
            return "451 4.3.0 try again later"
        self.messages.append(message_from_bytes(envelope.content))
        self.tls.append(session.ssl is not None)
        self.peers.append(session.peer)
        # a held mail is stored, its "250 OK" not yet sent; other sessions keep being served
        await asyncio.get_running_loop().run_in_executor(None, self.gates.passing, "DATA")
        await asyncio.sleep(self.delay_s)
        return "250 OK"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextmanager
def smtp_server(cert: Path, key: Path, *, delay_s: float = 0.0) -> Iterator[tuple[int, Mailbox]]:
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)
    mailbox = Mailbox(delay_s)
    controller = Controller(
        mailbox, hostname="127.0.0.1", port=_free_port(), tls_context=context, require_starttls=True
    )
    controller.start()
    try:
        yield controller.port, mailbox
    finally:
        mailbox.gates.release_all()
        controller.stop()


def loopback_receivers(http: str, smtp_port: int, cert: Path) -> dict[str, Receiver]:
    """Slack, email and PagerDuty receivers talking to the stand-ins (their secrets come from
    SLACK_BOT_TOKEN and PAGERDUTY_ROUTING_KEY, which the caller sets)."""
    return {
        "slack": SlackReceiver("slack", "c0dq", base_url=f"{http}/api/"),
        "email": EmailReceiver(
            "email",
            host="127.0.0.1",
            port=smtp_port,
            sender="dq@example.com",
            recipients=["billing@example.com"],
            ssl_context=lambda: ssl.create_default_context(cafile=str(cert)),
        ),
        "pagerduty": PagerDutyReceiver("pagerduty", url=f"{http}/v2/enqueue"),
    }


def loopback_receivers_toml(http: str, smtp_port: int, *, timeout_s: float | None = None) -> str:
    """The dq.toml receivers `slack`, `email` and `pagerduty` talking to the stand-ins (a `dq`
    process reads them; its secrets come from the environment)."""
    timeout = "" if timeout_s is None else f"\ntimeout_s = {timeout_s}"
    return f"""
[receivers.slack]
type = "slack"
channel = "C0DQ"
base_url = "{http}/api/"{timeout}

[receivers.email]
type = "email"
host = "127.0.0.1"
port = {smtp_port}
sender = "dq@example.com"
recipients = ["billing@example.com"]{timeout}

[receivers.pagerduty]
type = "pagerduty"
url = "{http}/v2/enqueue"{timeout}
"""
