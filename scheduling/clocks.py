"""Clocks say whether a check fires in a half-open window (start, end]. Invalid expressions fail
when the clock is built, that is when the check class is defined."""

from __future__ import annotations

import datetime as dt
import functools
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


FAST_WINDOW = dt.timedelta(hours=2)
#: minute, hour, day, month, cron weekday (0 = Sunday), and whether DST repeats this wall time
Minute = tuple[int, int, int, int, int, bool]


@functools.lru_cache(maxsize=64)
def _local_minutes(tz: str, start: dt.datetime, end: dt.datetime) -> tuple[Minute, ...]:
    """The whole minutes t with start < t <= end, as local fields in `tz` (shared by all
    checks of a window)."""
    zone = ZoneInfo(tz)
    first = start.astimezone(dt.UTC).replace(second=0, microsecond=0) + dt.timedelta(minutes=1)
    minutes = []
    moment = first
    while moment <= end:
        local = moment.astimezone(zone)
        minutes.append(
            (
                local.minute,
                local.hour,
                local.day,
                local.month,
                (local.weekday() + 1) % 7,
                _repeated(moment, zone),
            )
        )
        moment += dt.timedelta(minutes=1)
    return tuple(minutes)


@dataclass(frozen=True)
class _Fields:
    """A cron expression's fields as sets (None: any); only plain expressions qualify."""

    minutes: frozenset[int] | None
    hours: frozenset[int] | None
    days: frozenset[int] | None
    months: frozenset[int] | None
    weekdays: frozenset[int] | None

    @classmethod
    def parse(cls, expression: str) -> _Fields | None:
        parts = expression.split()
        if len(parts) != 5 or any(c in expression for c in "LW#?"):
            return None  # special syntax: croniter decides
        try:
            expanded = croniter.expand(expression)[0]
        except Exception:
            return None
        sets = [
            None if values == ["*"] else frozenset(int(v) % 7 if i == 4 else int(v) for v in values)
            for i, values in enumerate(expanded)
        ]
        return cls(*sets)

    def matches(self, minute: int, hour: int, day: int, month: int, weekday: int) -> bool:
        if self.minutes is not None and minute not in self.minutes:
            return False
        if self.hours is not None and hour not in self.hours:
            return False
        if self.months is not None and month not in self.months:
            return False
        day_ok = self.days is None or day in self.days
        weekday_ok = self.weekdays is None or weekday in self.weekdays
        if self.days is not None and self.weekdays is not None:
            return day_ok or weekday_ok  # cron: either restricted day field may match
        return day_ok and weekday_ok


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
        if not isinstance(self.expression, str) or not isinstance(self.tz, str):
            raise TypeError(
                f"Cron takes an expression and a time zone name as text, e.g. "
                f"Cron('0 6 * * *', tz='Europe/Paris'), got {self.expression!r}, {self.tz!r}"
            )
        if not croniter.is_valid(self.expression):
            raise ValueError(
                f"invalid cron expression {self.expression!r}: use five fields "
                f"'minute hour day-of-month month day-of-week', e.g. '0 6 * * 1-5'"
            )
        try:
            ZoneInfo(self.tz)
        except (ZoneInfoNotFoundError, ValueError) as exc:
            raise ValueError(
                f"unknown time zone {self.tz!r}: use an IANA name such as 'UTC' or 'Europe/Paris'"
            ) from exc

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
        fast = self._fields
        zone = ZoneInfo(self.tz)
        if (
            fast is not None
            and _aware(end) - _aware(start) <= FAST_WINDOW
            and start.astimezone(zone).utcoffset() == end.astimezone(zone).utcoffset()
        ):
            # A short window without a DST change: match its minutes against the fields
            # (about 20 times faster than croniter; a registry of 1,000 checks is due-checked
            # every 15 minutes).
            fixed_hour = self.expression.split()[1] != "*"
            return any(
                fast.matches(*m[:5]) and not (fixed_hour and m[5])
                for m in _local_minutes(self.tz, start, end)
            )
        return self.next_fire(start) <= _aware(end)

    @functools.cached_property
    def _fields(self) -> _Fields | None:
        return _Fields.parse(self.expression)

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
        if not isinstance(self.interval, dt.timedelta):
            raise TypeError(
                f"Every needs a datetime.timedelta, e.g. Every(dt.timedelta(hours=1)), "
                f"got {self.interval!r}"
            )
        if self.interval <= dt.timedelta(0):
            raise ValueError(f"Every needs a positive interval, got {self.interval}")
        if not isinstance(self.anchor, dt.datetime) or self.anchor.tzinfo is None:
            raise ValueError(
                f"Every's anchor must be a time-zone aware datetime, e.g. "
                f"dt.datetime(2026, 1, 1, tzinfo=dt.UTC), got {self.anchor!r}"
            )

    def next_fire(self, after: dt.datetime) -> dt.datetime:
        elapsed = _aware(after) - self.anchor
        steps = elapsed // self.interval + 1
        return self.anchor + steps * self.interval

    def fires_between(self, start: dt.datetime, end: dt.datetime) -> bool:
        return self.next_fire(start) <= _aware(end)

    def __str__(self) -> str:
        return f"every {self.interval}"
