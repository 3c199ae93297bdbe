"""Which checks are due: each check's window runs from the end of its last window (kept by the
local scheduler) to now, so after downtime a missed fire runs once, not once per missed window."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from checkers.project_db import as_utc
from scheduling.tables import scheduler_windows

TICK = dt.timedelta(minutes=15)
#: How far back a check that has never run (or was down for long) looks for a fire.
MAX_LOOKBACK = dt.timedelta(days=1)


@dataclass(frozen=True)
class Window:
    check: str
    start: dt.datetime
    end: dt.datetime


def is_due(clock: object, start: dt.datetime, end: dt.datetime) -> bool:
    """Whether `clock` fires in (start, end]; checks without a clock only run when asked."""
    fires = getattr(clock, "fires_between", None)
    return bool(fires and fires(start, end))


def due_windows(
    checks: Iterable[tuple[str, object]],
    now: dt.datetime,
    last_ends: Mapping[str, dt.datetime],
    *,
    tick: dt.timedelta = TICK,
    lookback: dt.timedelta = MAX_LOOKBACK,
) -> list[Window]:
    """Windows of the (name, clock) pairs whose clock fires between their last window end and
    `now` (a check seen for the first time looks back one tick). Such starts are rounded down to
    the tick, so concurrent runs at slightly different times share the start their claim keys."""
    due = []
    for name, clock in checks:
        start = last_ends.get(name, _floor(now - tick, tick))
        start = max(start, _floor(now - lookback, tick))
        if start < now and is_due(clock, start, now):
            due.append(Window(name, start, now))
    return due


def _floor(moment: dt.datetime, tick: dt.timedelta) -> dt.datetime:
    epoch = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
    return epoch + (moment - epoch) // tick * tick


def last_window_ends(engine: Engine) -> dict[str, dt.datetime]:
    with engine.connect() as connection:
        rows = connection.execute(sa.select(scheduler_windows)).all()
    return {name: as_utc(end) for name, end in rows}


def remember_window_ends(engine: Engine, names: Sequence[str], end: dt.datetime) -> None:
    """Move the named checks' last window end forward to `end` (never back: a concurrent run
    that started earlier must not reopen what a later one covered)."""
    try:
        _remember(engine, names, end)
    except sa.exc.IntegrityError:  # a concurrent run inserted the same first end: now known
        _remember(engine, names, end)


def _remember(engine: Engine, names: Sequence[str], end: dt.datetime) -> None:
    with engine.begin() as connection:
        known = set(connection.execute(sa.select(scheduler_windows.c.check_name)).scalars())
        for name in names:
            if name in known:
                connection.execute(
                    scheduler_windows.update()
                    .where(
                        scheduler_windows.c.check_name == name,
                        scheduler_windows.c.last_window_end < end,
                    )
                    .values(last_window_end=end)
                )
            else:
                connection.execute(
                    scheduler_windows.insert().values(check_name=name, last_window_end=end)
                )
