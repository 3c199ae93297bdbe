"""Source deadlines: the loader opens one per source, in the thread that loads it; SQL and HTTP
parsers turn what remains of it into their drivers' connect, statement and read timeouts."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

#: Seconds a source may take to load unless settings (`DQ_SOURCE_DEADLINE_S`) or its parser say
#: otherwise.
DEFAULT_DEADLINE_S = 300.0


@dataclass(frozen=True)
class Deadline:
    """`seconds` allowed, ending at `ends_at` on the monotonic clock (durations, not dates)."""

    seconds: float
    ends_at: float

    @classmethod
    def starting_now(cls, seconds: float) -> Deadline:
        return cls(seconds, time.monotonic() + seconds)

    def remaining(self) -> float:
        return max(0.0, self.ends_at - time.monotonic())

    @property
    def expired(self) -> bool:
        return time.monotonic() >= self.ends_at


_current: ContextVar[Deadline | None] = ContextVar("dq_source_deadline", default=None)


@contextmanager
def within(seconds: float) -> Iterator[Deadline]:
    """A deadline of `seconds` from now for the source loaded inside the block."""
    deadline = Deadline.starting_now(seconds)
    token = _current.set(deadline)
    try:
        yield deadline
    finally:
        _current.reset(token)


def current(own: float | None = None) -> Deadline:
    """The deadline of the load in progress; outside a loader (a parser used on its own), one
    starting now from the parser's `own` seconds or the default."""
    return _current.get() or Deadline.starting_now(own or DEFAULT_DEADLINE_S)


def timed_out(what: str, seconds: float) -> str:
    """The one wording of a missed deadline, whoever notices it first (loader or driver)."""
    return f"{what} timed out after {seconds:g} s"
