"""Parser for an HTTP JSON API: GET a URL, take the list of records at `records_path`."""

from __future__ import annotations

import contextlib
import functools
import http.client
import json
import socket
import threading
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, ClassVar

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.types import StructType

from checkers.deadlines import Deadline, current, timed_out
from checkers.env_secrets import env_name, secret_from_env
from checkers.parsers._base import Lazy, Parser, SourceError, SourceIdentity, resolve
from checkers.parsers._records import records_frame

_CHUNK = 64 * 1024


class _Cutter:
    """Shuts a request's sockets down at the deadline. A server trickling a byte at a time
    satisfies every per-read timeout, in the headers too; only closing the socket bounds the
    whole exchange."""

    def __init__(self, deadline: Deadline) -> None:
        self.fired = False
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self._timer = threading.Timer(deadline.remaining(), self._fire)
        self._timer.daemon = True

    def __enter__(self) -> _Cutter:
        self._timer.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._timer.cancel()

    def watch(self, sock: socket.socket) -> None:
        with self._lock:
            self._sockets.append(sock)
            if self.fired:
                self._shut(sock)

    def limit(self, seconds: float) -> None:
        """Each blocking socket operation waits at most `seconds` from now."""
        with self._lock:
            for sock in self._sockets:
                with contextlib.suppress(OSError):
                    sock.settimeout(seconds)

    def _fire(self) -> None:
        with self._lock:
            self.fired = True
            for sock in self._sockets:
                self._shut(sock)

    @staticmethod
    def _shut(sock: socket.socket) -> None:
        # The plain socket call, also under TLS: the reading thread then sees EOF or an error.
        with contextlib.suppress(OSError):
            socket.socket.shutdown(sock, socket.SHUT_RDWR)


class _Watched:
    """Hands each new socket to the cutter, which closes it at the deadline."""

    sock: socket.socket
    _cutter: _Cutter

    def __init__(self, *args: Any, cutter: _Cutter, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._cutter = cutter

    def connect(self) -> None:
        super().connect()  # type: ignore[misc]
        self._cutter.watch(self.sock)


class _WatchedHTTP(_Watched, http.client.HTTPConnection):
    pass


class _WatchedHTTPS(_Watched, http.client.HTTPSConnection):
    pass


class _HttpHandler(urllib.request.HTTPHandler):
    def __init__(self, cutter: _Cutter) -> None:
        super().__init__()
        self._cutter = cutter

    def http_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        return self.do_open(functools.partial(_WatchedHTTP, cutter=self._cutter), req)


class _HttpsHandler(urllib.request.HTTPSHandler):
    def __init__(self, cutter: _Cutter) -> None:
        super().__init__()
        self._cutter = cutter

    def https_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        return self.do_open(functools.partial(_WatchedHTTPS, cutter=self._cutter), req)


@dataclass(frozen=True)
class HttpJsonParser(Parser):
    """Records from a JSON API. `records_path` walks into the response (`("data", "items")`);
    `headers_from_env` maps header names to environment variables (tokens stay out of code).
    The whole request ends by the source's deadline; `timeout_s` bounds each wait for data.

    >>> HttpJsonParser("https://api.example.com/v1/payouts", records_path=("data",),
    ...     headers_from_env=(("Authorization", "PAYOUTS_API_AUTH"),),
    ...     schema="id string, amount double")
    """

    url: Lazy
    records_path: tuple[str, ...] = ()
    query: tuple[tuple[str, str], ...] = field(default=())
    headers_from_env: tuple[tuple[str, str], ...] = field(default=())
    schema: str | StructType | None = None
    casts_to_promise: ClassVar[bool] = True
    timeout_s: float = 30.0
    deadline_s: float | None = field(default=None, kw_only=True)

    def __post_init__(self) -> None:
        # A token pasted where its variable's name belongs is refused here, never echoed later.
        for n, pair in enumerate(self.headers_from_env):
            option = f"headers_from_env[{n}]"
            if not (isinstance(pair, tuple | list) and len(pair) == 2):
                raise ValueError(f"HttpJsonParser: {option} must be a (header, variable) pair")
            env_name(option, pair[1], owner="HttpJsonParser")

    def _fetch(self) -> object:
        url = resolve(self.url)
        if self.query:
            url = f"{url}{'&' if '?' in url else '?'}{urllib.parse.urlencode(self.query)}"
        headers = {"Accept": "application/json"}
        for header, variable in self.headers_from_env:
            try:
                headers[header] = secret_from_env(variable, option=f"headers_from_env[{header!r}]")
            except LookupError as exc:
                raise SourceError(f"{self.describe()}: {exc}") from None
        request = urllib.request.Request(url, headers=headers)
        deadline = current(self.deadline_s)
        with _Cutter(deadline) as cutter:
            try:
                body, content_type = self._get(request, deadline, cutter)
            except urllib.error.HTTPError as exc:
                raise SourceError(
                    f"{self.describe()} answered HTTP {exc.code} {exc.reason}"
                ) from exc
            except (urllib.error.URLError, OSError, http.client.HTTPException) as exc:
                if cutter.fired or deadline.expired:
                    raise SourceError(timed_out(self.describe(), deadline.seconds)) from exc
                reason = getattr(exc, "reason", exc)
                raise SourceError(f"{self.describe()} is unreachable: {reason}") from exc
        try:
            return json.loads(body)
        except ValueError as exc:
            raise SourceError(
                f"{self.describe()} did not return JSON (Content-Type: {content_type or 'none'}): "
                f"{exc}"
            ) from exc

    def _get(
        self, request: urllib.request.Request, deadline: Deadline, cutter: _Cutter
    ) -> tuple[bytes, str]:
        """The body and its content type. The body is read in chunks; each socket wait ends by
        the deadline (and after `timeout_s` without data), and the cutter ends a trickle."""

        def wait() -> float:
            if deadline.expired:
                raise TimeoutError
            return min(self.timeout_s, deadline.remaining())

        opener = urllib.request.build_opener(_HttpHandler(cutter), _HttpsHandler(cutter))
        chunks = []
        with opener.open(request, timeout=wait()) as response:
            content_type = response.headers.get("Content-Type", "")
            while True:
                cutter.limit(wait())
                chunk = response.read1(_CHUNK)
                if not chunk:
                    break
                chunks.append(chunk)
        if cutter.fired:  # the body ended because the cutter closed the socket
            raise TimeoutError
        return b"".join(chunks), content_type

    def read(self, spark: SparkSession) -> DataFrame:
        data = self._fetch()
        for step in self.records_path:
            if not isinstance(data, Mapping) or step not in data:
                raise SourceError(
                    f"{self.describe()}: response has no {step!r} along {self.records_path}"
                )
            data = data[step]
        if not isinstance(data, list) or not all(isinstance(r, Mapping) for r in data):
            raise SourceError(f"{self.describe()}: expected a list of JSON objects")
        columns = list(dict.fromkeys(k for record in data for k in record))
        if not columns and self.schema is None:
            raise SourceError(f"{self.describe()}: no records and no promised schema")
        return records_frame(spark, data, columns, self.schema)

    def describe(self) -> str:
        return f"HTTP API {_where(resolve(self.url))}"

    def source_identity(self) -> SourceIdentity:
        parsed = urllib.parse.urlsplit(resolve(self.url))
        where = _where(resolve(self.url))
        return SourceIdentity(f"url:{where}", parsed.path.rstrip("/").rsplit("/", 1)[-1] or where)


def _where(url: str) -> str:
    """The URL without credentials or query, its port kept (two services on one host differ)."""
    parsed = urllib.parse.urlsplit(url)
    port = f":{parsed.port}" if parsed.port else ""
    return f"{parsed.scheme}://{parsed.hostname}{port}{parsed.path}"
