"""Recording races: when another process opened the same incident a moment earlier, the unique
open fingerprint rejects the second one; recording runs again in a fresh transaction, which then
finds that incident and updates it."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TypeVar

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

log = logging.getLogger(__name__)
T = TypeVar("T")


def record_in_transaction(engine: Engine, record: Callable[[Connection], T]) -> T:
    """`record(connection)` in a transaction of its own; retried once, from the start, when a
    unique constraint rejected it (the first attempt is rolled back whole)."""
    try:
        with engine.begin() as connection:
            return record(connection)
    except sa.exc.IntegrityError as exc:
        log.info("recording conflicted with a concurrent run (%s); retrying once", exc.orig)
    with engine.begin() as connection:
        return record(connection)
