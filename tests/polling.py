"""Waiting in tests: poll a condition until it holds, failing after a deadline (never a bare
sleep as synchronisation)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def wait_for(condition: Callable[[], T], what: str, timeout: float = 30.0) -> T:
    """Poll `condition` until it returns something truthy, and return that; fail after
    `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while not (value := condition()):
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)
    return value
