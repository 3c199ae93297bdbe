"""Loopback servers that misbehave as slow sources do: an HTTP API that hangs, trickles its body
or its headers (1 byte every 2 s) or answers at once, and a TCP listener that accepts and never
speaks (a silent database). Everything they hold is released when the block ends."""

from __future__ import annotations

import json
import socketserver
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

RECORDS = [{"id": "a", "amount": 1}, {"id": "b", "amount": 2}]
#: The trickle's pace: the fault itself, not synchronisation.
TRICKLE_EVERY_S = 2.0
TRICKLED_BYTES = 60  # two minutes at that pace


class _SlowApi(BaseHTTPRequestHandler):
    stop: threading.Event

    def do_GET(self) -> None:
        body = json.dumps({"data": RECORDS}).encode()
        if self.path == "/hang":
            self.stop.wait()
            return
        if self.path == "/trickle-headers":
            self._trickle(b"HTTP/1.1 200 OK\r\nX-Slow: " + b"." * TRICKLED_BYTES)
            return
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        if self.path == "/trickle":
            padded = body + b" " * TRICKLED_BYTES
            self.send_header("Content-Length", str(len(padded)))
            self.end_headers()
            self._trickle(padded)
            return
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self._write(body)

    def _trickle(self, data: bytes) -> None:
        for n in range(len(data)):
            if self.stop.wait(TRICKLE_EVERY_S) or not self._write(data[n : n + 1]):
                return

    def _write(self, data: bytes) -> bool:
        try:
            self.wfile.write(data)
            self.wfile.flush()
        except OSError:  # the client gave up
            return False
        return True

    def log_message(self, *args: object) -> None:
        pass


@contextmanager
def slow_api() -> Iterator[str]:
    """Base URL of an API with `/hang`, `/trickle`, `/trickle-headers` and `/ok`."""
    stop = threading.Event()
    handler = type("SlowApi", (_SlowApi,), {"stop": stop})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        stop.set()
        server.shutdown()
        server.server_close()
        thread.join()


class _Silent(socketserver.BaseRequestHandler):
    stop: threading.Event
    accepted: list[int]

    def handle(self) -> None:
        self.accepted.append(1)
        self.stop.wait()


@contextmanager
def silent_listener() -> Iterator[tuple[int, list[int]]]:
    """A port that accepts connections and never sends a byte, and the list of accepted ones."""
    stop = threading.Event()
    accepted: list[int] = []
    handler = type("Silent", (_Silent,), {"stop": stop, "accepted": accepted})
    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1], accepted
    finally:
        stop.set()
        server.shutdown()
        server.server_close()
        thread.join()
