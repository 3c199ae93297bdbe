"""A loopback HTTP server for tests of HTTP sources: each GET is answered by a function of the
request (its path and headers), so a test says what the source returns, not how to serve it."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import NamedTuple


class Reply(NamedTuple):
    status: int
    body: bytes
    content_type: str | None = None


Answer = Callable[[BaseHTTPRequestHandler], Reply]


@contextmanager
def http_stub(answer: Answer) -> Iterator[str]:
    """A server on 127.0.0.1 answering every GET with `answer(request)`; yields its base URL
    (with the port) and stops it afterwards."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            reply = answer(self)
            self.send_response(reply.status)
            if reply.content_type:
                self.send_header("Content-Type", reply.content_type)
            self.send_header("Content-Length", str(len(reply.body)))
            self.end_headers()
            self.wfile.write(reply.body)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
