"""Clocks say whether a check fires in a half-open window (start, end]. Invalid expressions fail
when the clock is built, that is when the check class is defined."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Protocol
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from croniter import croniter

_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)


class Clock(Protocol):
    def fires_between(self, start: dt.datetime, end: dt.datetime) -> bool:
        """Whether the clock fires at a time t with start < t <= end (tz-aware datetimes)."""
        ...


def _aware(moment: dt.datetime) -> dt.datetime:
    if moment.tzinfo is None:
        raise ValueError(f"clocks need time-zone aware datetimes, got {moment!r}")
    return moment


def _repeated(moment: dt.datetime, zone: ZoneInfo) -> bool:
    """Whether `moment` is the second occurrence of its wall-clock time (DST fall back)."""
    wall = moment.astimezone(zone).replace(tzinfo=None)
    first = wall.replace(tzinfo=zone, fold=0).astimezone(dt.UTC)
    return first < moment.astimezone(dt.UTC)


@dataclass(frozen=True)
class Cron:
    """A cron expression read in time zone `tz` (so `0 6 * * *` in Europe/Paris follows DST).

    >>> Cron("0 6 * * 1-5", tz="Europe/Paris")
    """

    expression: str
    tz: str = "UTC"

    def __post_init__(self) -> None:
        if not croniter.is_valid(self.expression):
            raise ValueError(f"invalid cron expression {self.expression!r}")
        try:
            ZoneInfo(self.tz)
        except (ZoneInfoNotFoundError, ValueError) as exc:
            raise ValueError(f"unknown time zone {self.tz!r}") from exc

    def next_fire(self, after: dt.datetime) -> dt.datetime:
        """The first fire strictly after `after`. As in cron, a job at fixed hours runs once
        when DST repeats an hour; wildcard-hour jobs follow elapsed time and run in both."""
        zone = ZoneInfo(self.tz)
        iterator = croniter(self.expression, _aware(after).astimezone(zone))
        while True:
            fire: dt.datetime = iterator.get_next(dt.datetime)
            if self.expression.split()[1] == "*" or not _repeated(fire, zone):
                return fire

    def fires_between(self, start: dt.datetime, end: dt.datetime) -> bool:
        return self.next_fire(start) <= _aware(end)

    def __str__(self) -> str:
        return f"cron {self.expression!r} ({self.tz})"


@dataclass(frozen=True)
class Every:
    """Fires at every multiple of `interval` since `anchor` (default the Unix epoch, UTC).

    >>> Every(dt.timedelta(hours=1))
    """

    interval: dt.timedelta
    anchor: dt.datetime = _EPOCH

    def __post_init__(self) -> None:
        if self.interval <= dt.timedelta(0):
            raise ValueError(f"Every needs a positive interval, got {self.interval}")
        _aware(self.anchor)

    def next_fire(self, after: dt.datetime) -> dt.datetime:
        elapsed = _aware(after) - self.anchor
        steps = elapsed // self.interval + 1
        return self.anchor + steps * self.interval

    def fires_between(self, start: dt.datetime, end: dt.datetime) -> bool:
        return self.next_fire(start) <= _aware(end)

    def __str__(self) -> str:
        return f"every {self.interval}"
