"""Managing silences from the CLI: add one (for a duration or until a time), list the active and
upcoming ones, expire one now. The next tick reconciles an ended silence (alerting.reconcile)."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from alerting.mutes import Silence, add_silence, stored_silences
from alerting.tables import mutes

_DURATION = re.compile(r"(\d+(?:\.\d+)?)([wdhms])")
_UNITS = {"w": "weeks", "d": "days", "h": "hours", "m": "minutes", "s": "seconds"}


def parse_duration(text: str) -> dt.timedelta:
    """`2h`, `90m`, `1d12h`, `1w` -> a positive timedelta."""
    compact = text.strip().lower().replace(" ", "")
    parts = _DURATION.findall(compact)
    if not compact or "".join(a + u for a, u in parts) != compact:
        raise ValueError(f"cannot read the duration {text!r}: write e.g. 30m, 2h, 1d12h, 1w")
    total = sum((dt.timedelta(**{_UNITS[u]: float(a)}) for a, u in parts), dt.timedelta())
    if total <= dt.timedelta(0):
        raise ValueError(f"the duration {text!r} must be positive")
    return total


def new_silence(
    pattern: str,
    *,
    now: dt.datetime,
    comment: str,
    created_by: str,
    duration: dt.timedelta | None = None,
    until: dt.datetime | None = None,
    starts_at: dt.datetime | None = None,
) -> Silence:
    """A silence of checks matching `pattern` from `starts_at` (default `now`) for `duration` or
    until `until` (exactly one of them). A comment is required: whoever sees it must know why."""
    if (duration is None) == (until is None):
        raise ValueError("give a duration or an end time, not both")
    if not pattern.strip():
        raise ValueError("the check pattern is empty")
    if not comment.strip():
        raise ValueError("a silence needs a comment saying why")
    start = starts_at or now
    end = until if until is not None else start + duration  # type: ignore[operator]
    if end <= start:
        raise ValueError(f"the silence ends ({end.isoformat()}) before it starts")
    if end <= now:
        raise ValueError(f"the silence would already be over ({end.isoformat()})")
    return Silence(pattern, start, end, comment.strip(), created_by)


def store_silence(connection: Connection, silence: Silence) -> Silence:
    """Store `silence` in dq_mutes; returns it with its id."""
    return Silence(**{**silence.__dict__, "id": add_silence(connection, silence)})


def current_silences(
    connection: Connection, now: dt.datetime, configured: Iterable[Silence] = ()
) -> list[Silence]:
    """Active and upcoming silences (not yet ended at `now`), stored and configured, by start."""
    live = [s for s in [*stored_silences(connection), *configured] if s.ends_at > now]
    return sorted(live, key=lambda s: (s.starts_at, s.id or 0))


def expire_silence(connection: Connection, silence_id: int, now: dt.datetime) -> Silence:
    """End silence `silence_id` at `now` (an upcoming one never starts). The next tick then
    reconciles what it suppressed. Raises LookupError for an unknown or already ended silence."""
    found = {s.id: s for s in stored_silences(connection)}.get(silence_id)
    if found is None:
        raise LookupError(f"no silence with id {silence_id}; `dq silence list` shows them")
    if found.ends_at <= now:
        raise LookupError(f"silence {silence_id} already ended at {found.ends_at.isoformat()}")
    starts = min(found.starts_at, now)
    connection.execute(
        sa.update(mutes).where(mutes.c.id == silence_id).values(starts_at=starts, ends_at=now)
    )
    return Silence(**{**found.__dict__, "starts_at": starts, "ends_at": now})


def describe_silence(silence: Silence) -> str:
    return (
        f"{silence.check_pattern} from {silence.starts_at.isoformat()} "
        f"until {silence.ends_at.isoformat()} by {silence.created_by or '?'}: {silence.comment}"
    )
