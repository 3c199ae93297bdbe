"""The delivery stage: send pending outbox rows, per (incident, receiver) in sequence order, with
bounded retries and backoff inside a run. A retryable failure stays pending for the next run; a
permanent one is marked failed with its reason and logged. Delivery is at-least-once; dedup keys
are stable, so receivers that support them (PagerDuty) collapse repeats."""

from __future__ import annotations

import datetime as dt
import json
import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from alerting.model import Notification
from alerting.receivers.base import Delivery, Receiver
from checkers.storage import as_utc, notifications, receiver_threads

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RetryPolicy:
    """`attempts` tries per run; waits `backoff_s * 2**n`, or the receiver's Retry-After, capped
    at `max_wait_s` (a flooded channel must not stall a 15-minute run)."""

    attempts: int = 3
    backoff_s: float = 1.0
    max_wait_s: float = 30.0

    def wait(self, attempt: int, delivery: Delivery) -> float:
        if delivery.retry_after_s is not None:
            return min(delivery.retry_after_s, self.max_wait_s)
        return min(self.backoff_s * 2**attempt, self.max_wait_s)


@dataclass
class DeliveryReport:
    sent: list[str] = field(default_factory=list)  # dedup keys
    pending: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)


def _thread(engine: Engine, incident_id: int, receiver: str) -> dict[str, object]:
    with engine.connect() as connection:
        text = connection.execute(
            sa.select(receiver_threads.c.thread).where(
                receiver_threads.c.incident_id == incident_id,
                receiver_threads.c.receiver == receiver,
            )
        ).scalar()
    return json.loads(text) if text else {}


def _save_progress(
    engine: Engine,
    row_id: int,
    notification: Notification,
    delivery: Delivery,
    values: Mapping[str, object],
) -> None:
    with engine.begin() as connection:
        connection.execute(
            notifications.update().where(notifications.c.id == row_id).values(**values)
        )
        if delivery.thread:
            connection.execute(
                receiver_threads.update()
                .where(
                    receiver_threads.c.incident_id == notification.incident_id,
                    receiver_threads.c.receiver == notification.receiver,
                )
                .values(thread=json.dumps(delivery.thread, sort_keys=True))
            )


def deliver_pending(
    engine: Engine,
    receivers: Mapping[str, Receiver],
    now: dt.datetime,
    *,
    retry: RetryPolicy | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> DeliveryReport:
    """Deliver every pending notification that is due."""
    policy = retry or RetryPolicy()
    report = DeliveryReport()
    with engine.connect() as connection:
        rows = list(
            connection.execute(
                sa.select(notifications)
                .where(notifications.c.status == "pending")
                .order_by(
                    notifications.c.incident_id, notifications.c.receiver, notifications.c.sequence
                )
            ).mappings()
        )
    blocked: set[tuple[int, str]] = set()
    for row in rows:
        key = (row["incident_id"], row["receiver"])
        due = as_utc(row["next_attempt_at"])
        if key in blocked or (due is not None and due > now):
            blocked.add(key)  # later notifications of this thread wait for this one: order holds
            report.pending.append(row["dedup_key"])
            continue
        outcome = _deliver_row(
            engine, dict(row), receivers.get(row["receiver"]), now, policy, sleep
        )
        getattr(report, outcome).append(row["dedup_key"])
        if outcome != "sent":
            blocked.add(key)
    return report


def _deliver_row(
    engine: Engine,
    row: Mapping[str, Any],
    receiver: Receiver | None,
    now: dt.datetime,
    policy: RetryPolicy,
    sleep: Callable[[float], None],
) -> str:
    notification = Notification.from_json(str(row["payload"]))
    row_id = int(row["id"])  # type: ignore[call-overload]
    if receiver is None:
        error = f"no receiver named {notification.receiver!r} is configured"
        log.error("notification %s not delivered: %s", notification.dedup_key, error)
        _save_progress(
            engine,
            row_id,
            notification,
            Delivery(ok=False),
            {"status": "failed", "last_error": error},
        )
        return "failed"
    steps = int(row["steps_done"])  # type: ignore[call-overload]
    attempts = int(row["attempts"])  # type: ignore[call-overload]
    thread = _thread(engine, notification.incident_id, notification.receiver)
    for attempt in range(policy.attempts):
        try:
            delivery = receiver.send(notification, thread, steps)
        except Exception as exc:  # a receiver bug: keep the notification, say why
            delivery = Delivery(
                ok=False, steps_done=steps, retryable=True, error=f"{type(exc).__name__}: {exc}"
            )
        attempts += 1
        steps = max(steps, delivery.steps_done)
        thread = {**thread, **delivery.thread}
        values: dict[str, object] = {
            "attempts": attempts,
            "steps_done": steps,
            "last_error": delivery.error,
        }
        if delivery.ok:
            _save_progress(
                engine, row_id, notification, delivery, {**values, "status": "sent", "sent_at": now}
            )
            return "sent"
        if not delivery.retryable:
            _save_progress(engine, row_id, notification, delivery, {**values, "status": "failed"})
            log.error(
                "notification %s failed permanently: %s", notification.dedup_key, delivery.error
            )
            return "failed"
        _save_progress(engine, row_id, notification, delivery, values)
        if attempt + 1 < policy.attempts:
            sleep(policy.wait(attempt, delivery))
    log.warning(
        "notification %s still pending after %d attempts: %s",
        notification.dedup_key,
        policy.attempts,
        delivery.error,
    )
    return "pending"
