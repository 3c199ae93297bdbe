"""Waiting in tests, never a bare sleep as synchronisation: block on what the other side signals
(an event another thread sets, a line another process writes on a pipe), or, where nothing can
signal (a server coming up, a lease running out), poll a condition until it holds; each fails
after a deadline."""

from __future__ import annotations

import select
import threading
import time
from collections.abc import Callable
from typing import IO, TypeVar

T = TypeVar("T")


def wait_for(condition: Callable[[], T], what: str, timeout: float = 30.0) -> T:
    """Poll `condition` until it returns something truthy, and return that; fail after
    `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while not (value := condition()):
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)
    return value


def wait_until_set(event: threading.Event, what: str, timeout: float = 30.0) -> None:
    """Block until another thread sets `event`; fail after `timeout` seconds."""
    assert event.wait(timeout), f"timed out waiting for {what}"


def wait_for_line(stream: IO[bytes], what: str, timeout: float = 30.0) -> bytes:
    """Block until another process writes a line on the pipe `stream`, and return it; fail when
    the pipe closes first (the process ended) or after `timeout` seconds."""
    readable, _, _ = select.select([stream], [], [], timeout)
    assert readable, f"timed out waiting for {what}"
    line = stream.readline()
    assert line, f"the other process ended before {what}"
    return line
