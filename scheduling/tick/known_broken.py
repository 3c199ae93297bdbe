"""Keys people said are known broken for a while (triage's "this is expected" on a row check,
stored in dq_known_broken_keys until they expire): each run excuses them like a check's own
KnownBroken keys. A check with such keys runs as a subclass whose tolerance also accepts a run
whose every failure is one of them; the outcome's tolerance text says so."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Sequence

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from checkers.engine_tables import known_broken_keys
from checkers.tolerances import KnownBroken
from checks import QualityCheck


def stored_keys(
    connection: Connection, names: Sequence[str], now: dt.datetime
) -> dict[str, list[object]]:
    """Check name -> its keys known broken at `now`."""
    if not names:
        return {}
    t = known_broken_keys
    rows = connection.execute(
        sa.select(t.c.check_name, t.c.key)
        .where(t.c.check_name.in_(sorted(set(names))), t.c.expires_at > now)
        .order_by(t.c.id)
    )
    found: dict[str, list[object]] = {}
    for name, text in rows:
        key = json.loads(text)
        found.setdefault(name, []).append(tuple(key) if isinstance(key, list) else key)
    return found


def with_stored_keys(
    checks: Sequence[type[QualityCheck]], connection: Connection, now: dt.datetime
) -> list[type[QualityCheck]]:
    """`checks`, each with keys known broken at `now` replaced by one that excuses them too."""
    found = stored_keys(connection, [c.name for c in checks], now)
    return [excusing(c, found[c.name]) if c.name in found else c for c in checks]


def excusing(check: type[QualityCheck], keys: Sequence[object]) -> type[QualityCheck]:
    """`check` whose tolerance also accepts a run failing only on `keys`."""
    listed = [k for k in keys if k is not None and not (isinstance(k, tuple) and None in k)]
    nulls = len(listed) < len(keys)  # a failing NULL key people marked: excused explicitly
    tolerance = check.tolerance | KnownBroken(dict.fromkeys(listed), nulls=nulls)
    attributes = {"name": check.name, "tolerance": tolerance, "__module__": check.__module__}
    return type(check.__name__, (check,), attributes, register=False)
