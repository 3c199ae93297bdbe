"""Mutes: silences (one-off, by check name pattern) and recurring maintenance windows. A mute
suppresses notifications; incidents and the suppressed notifications are still recorded. Stored
silences are read and written by alerting.store."""

from __future__ import annotations

import datetime as dt
import fnmatch
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol


class Mute(Protocol):
    def mutes(self, check: str, now: dt.datetime, fingerprint: str = "") -> str | None:
        """Why notifications of `check` (its incident's `fingerprint`) are muted at `now`, or
        None."""
        ...


@dataclass(frozen=True)
class Silence:
    """Mute checks matching `check_pattern` (fnmatch: `flights_*`) from `starts_at` to `ends_at`;
    with `fingerprint` (a snooze from triage), only that incident's fingerprint of them."""

    check_pattern: str
    starts_at: dt.datetime
    ends_at: dt.datetime
    comment: str = ""
    created_by: str = ""
    id: int | None = None  # dq_mutes id; None for silences given in dq.toml
    fingerprint: str | None = None

    def mutes(self, check: str, now: dt.datetime, fingerprint: str = "") -> str | None:
        if self.fingerprint is not None and fingerprint != self.fingerprint:
            return None
        if self.starts_at <= now < self.ends_at and fnmatch.fnmatchcase(check, self.check_pattern):
            return f"silenced until {self.ends_at.isoformat()}: {self.comment}".rstrip(": ")
        return None


@dataclass(frozen=True)
class MaintenanceWindow:
    """A recurring window: every week on `weekdays` (0 = Monday) from `start` for `duration`, in
    time zone `tz`, for checks matching `check_pattern`."""

    check_pattern: str
    weekdays: tuple[int, ...]
    start: dt.time
    duration: dt.timedelta
    tz: str = "UTC"
    comment: str = "maintenance"

    def mutes(self, check: str, now: dt.datetime, fingerprint: str = "") -> str | None:
        from zoneinfo import ZoneInfo

        if not fnmatch.fnmatchcase(check, self.check_pattern):
            return None
        local = now.astimezone(ZoneInfo(self.tz))
        for days_back in range(0, 8):
            day = local.date() - dt.timedelta(days=days_back)
            if day.weekday() not in self.weekdays:
                continue
            begins = dt.datetime.combine(day, self.start, tzinfo=ZoneInfo(self.tz))
            if begins <= local < begins + self.duration:
                return f"{self.comment} window since {begins.isoformat()}"
        return None


def muted_because(
    check: str, now: dt.datetime, active: Sequence[Mute], fingerprint: str = ""
) -> str | None:
    """Why the first of `active` that covers `check` (`fingerprint`) at `now` mutes it, or None."""
    for mute in active:
        reason = mute.mutes(check, now, fingerprint)
        if reason:
            return reason
    return None
