"""Canonical texts computed in Python: SQLite has no md5 nor exact timestamp formatting, so these
are registered on its connections. Each function returns exactly what the SQL and Spark
expressions of `normalise` compute in their engines."""

from __future__ import annotations

import datetime as dt
import hashlib
import math
from decimal import Decimal, InvalidOperation

GRID_LIMIT = 2.0**50
"""Quotients |x / tolerance| below this are hashed on the grid; above, the double is hashed
exactly (a double's own spacing there approaches the grid step: rounding would merge values)."""


def float_text(value: object, tolerance: float) -> str | None:
    if value is None:
        return None
    x = float(value)  # type: ignore[arg-type]
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    if abs(x / tolerance) < GRID_LIMIT:
        return str(math.floor(x / tolerance + 0.5))
    exponent = math.frexp(x)[1] - 1  # x = m * 2**exponent with 1 <= |m| < 2
    return f"{exponent}p{int(x / 2.0 ** (exponent - 52))}"


def decimal_text(value: object) -> str | None:
    """Plain decimal text, no trailing fractional zeros (SQLite stores DECIMAL as int or real)."""
    if value is None:
        return None
    if isinstance(value, int):
        return str(value)
    try:
        number = Decimal(repr(value)) if isinstance(value, float) else Decimal(str(value))
    except InvalidOperation:
        return str(value)
    text = format(number, "f")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return "0" if text == "-0" else text


def _parse(value: object) -> dt.datetime | None:
    if value is None:
        return None
    if isinstance(value, dt.datetime):
        return value
    if isinstance(value, dt.date):
        return dt.datetime(value.year, value.month, value.day)
    try:
        return dt.datetime.fromisoformat(str(value))
    except ValueError:
        return None


def date_text(value: object) -> str | None:
    parsed = _parse(value)
    return None if parsed is None else f"{parsed.year:04d}-{parsed.month:02d}-{parsed.day:02d}"


def timestamp_text(value: object) -> str | None:
    """Naive timestamps as written; ones stored with an offset are converted to UTC first."""
    parsed = _parse(value)
    if parsed is None:
        return None
    if parsed.tzinfo is not None:
        parsed = parsed.astimezone(dt.UTC).replace(tzinfo=None)
    return (
        f"{parsed.year:04d}-{parsed.month:02d}-{parsed.day:02d} "
        f"{parsed.hour:02d}:{parsed.minute:02d}:{parsed.second:02d}.{parsed.microsecond:06d}"
    )


def md5_hex(text: object) -> str | None:
    return None if text is None else hashlib.md5(str(text).encode("utf-8")).hexdigest()


def hex_int(text: object) -> int | None:
    return None if text is None else int(str(text), 16)


class ExactSum:
    """SQLite aggregate: the exact sum of integers, as text (SQLite's own sum() raises past
    2**63)."""

    def __init__(self) -> None:
        self.total = 0

    def step(self, value: object) -> None:
        if value is not None:
            self.total += int(value)  # type: ignore[call-overload]

    def finalize(self) -> str:
        return str(self.total)


SQLITE_FUNCTIONS = {
    "dq_float_text": (2, float_text),
    "dq_decimal_text": (1, decimal_text),
    "dq_date_text": (1, date_text),
    "dq_timestamp_text": (1, timestamp_text),
    "dq_md5": (1, md5_hex),
    "dq_hex_int": (1, hex_int),
}
