"""Mutes: silences (one-off, by check name pattern) and recurring maintenance windows. A mute
suppresses notifications; incidents and the suppressed notifications are still recorded."""

from __future__ import annotations

import datetime as dt
import fnmatch
from dataclasses import dataclass
from typing import Protocol

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from alerting.tables import mutes
from checkers.project_db import as_utc


class Mute(Protocol):
    def mutes(self, check: str, now: dt.datetime) -> str | None:
        """Why notifications of `check` are muted at `now`, or None."""
        ...


@dataclass(frozen=True)
class Silence:
    """Mute checks matching `check_pattern` (fnmatch: `flights_*`) from `starts_at` to `ends_at`."""

    check_pattern: str
    starts_at: dt.datetime
    ends_at: dt.datetime
    comment: str = ""
    created_by: str = ""
    id: int | None = None  # dq_mutes id; None for silences given in dq.toml

    def mutes(self, check: str, now: dt.datetime) -> str | None:
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

    def mutes(self, check: str, now: dt.datetime) -> str | None:
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


def stored_silences(connection: Connection) -> list[Silence]:
    rows = connection.execute(sa.select(mutes).order_by(mutes.c.id)).mappings()
    return [
        Silence(
            r["check_pattern"],
            as_utc(r["starts_at"]),  # type: ignore[arg-type]
            as_utc(r["ends_at"]),  # type: ignore[arg-type]
            r["comment"],
            r["created_by"],
            r["id"],
        )
        for r in rows
    ]


def add_silence(connection: Connection, silence: Silence) -> int:
    """Store `silence` in dq_mutes; returns its id."""
    result = connection.execute(
        mutes.insert().values(
            check_pattern=silence.check_pattern,
            starts_at=silence.starts_at,
            ends_at=silence.ends_at,
            comment=silence.comment,
            created_by=silence.created_by,
        )
    )
    return int(result.inserted_primary_key[0])  # type: ignore[index]


def muted_because(check: str, now: dt.datetime, active: list[Mute]) -> str | None:
    for mute in active:
        reason = mute.mutes(check, now)
        if reason:
            return reason
    return None
