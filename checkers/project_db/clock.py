"""The one place that asks the system clock, and reading back the datetimes the project
database stored."""

from __future__ import annotations

import datetime as dt


def utc_now() -> dt.datetime:
    """The one place that asks the system clock; everything else takes `now`."""
    return dt.datetime.now(dt.UTC)


def as_utc(value: dt.datetime | None) -> dt.datetime | None:
    """Datetimes read back from SQLite lose their zone; they were written in UTC."""
    if value is None:
        return None
    return value.replace(tzinfo=dt.UTC) if value.tzinfo is None else value.astimezone(dt.UTC)
