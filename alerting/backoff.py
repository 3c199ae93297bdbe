"""Per-receiver backoff, persisted in `dq_receiver_backoff`: after a rate limit or an outage a
receiver is not called again before `not_before` (its Retry-After, or an exponential backoff),
whichever process or run asks next."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from alerting.tables import receiver_backoff
from checkers.project_db import as_utc


@dataclass(frozen=True)
class ReceiverBackoff:
    receiver: str
    not_before: dt.datetime | None = None
    consecutive_failures: int = 0
    last_error: str | None = None

    def blocks(self, now: dt.datetime) -> bool:
        return self.not_before is not None and self.not_before > now


def backoff_wait(
    failures: int, retry_after_s: float | None, *, base_s: float, max_s: float
) -> float:
    """Seconds to leave a receiver alone after its `failures`-th failure in a row (pure):
    the receiver's own Retry-After when it gave one, else `base_s * 2**(failures - 1)`."""
    if retry_after_s is not None:
        return max(0.0, retry_after_s)
    return min(base_s * 2 ** max(0, failures - 1), max_s)


def load_backoff(engine: Engine, receiver: str) -> ReceiverBackoff:
    with engine.connect() as connection:
        row = (
            connection.execute(
                sa.select(receiver_backoff).where(receiver_backoff.c.receiver == receiver)
            )
            .mappings()
            .first()
        )
    if row is None:
        return ReceiverBackoff(receiver)
    return ReceiverBackoff(
        receiver,
        as_utc(row["not_before"]),
        int(row["consecutive_failures"]),
        row["last_error"],
    )


def save_backoff(engine: Engine, backoff: ReceiverBackoff, now: dt.datetime) -> None:
    """Upsert (portable: update, insert when absent; a concurrent insert means another process
    recorded the same receiver's trouble, and the later write wins)."""
    values = {
        "not_before": backoff.not_before,
        "consecutive_failures": backoff.consecutive_failures,
        "last_error": backoff.last_error,
        "updated_at": now,
    }
    table = receiver_backoff
    update = table.update().where(table.c.receiver == backoff.receiver).values(**values)
    try:
        with engine.begin() as connection:
            if not connection.execute(update).rowcount:
                connection.execute(table.insert().values(receiver=backoff.receiver, **values))
    except sa.exc.IntegrityError:
        with engine.begin() as connection:
            connection.execute(update)
