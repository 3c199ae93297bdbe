"""The receiver contract: one call performs ONE external step of a notification (a Slack post, an
edit, a mail, an event) and reports it, so the delivery stage records each side effect before the
next one starts. Retries, ordering, leases and dedup are the delivery stage's job."""

from __future__ import annotations

import datetime as dt
import email.utils
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from alerting.model import Notification
from checkers.project_db import utc_now

#: Receiver-specific memory of an incident (Slack channel and root ts, first Message-ID...).
Thread = dict[str, object]


@dataclass(frozen=True)
class Delivery:
    """The result of one step. `steps_done` counts the steps finished so far (a Slack update is a
    reply, then an edit of the root); `more` says further steps remain; `thread` is the
    receiver's updated memory of the incident. A failed step is `in_doubt` when it may still
    have taken effect (a timeout after the request went out), so a retry looks before repeating."""

    ok: bool
    steps_done: int = 0
    thread: Thread = field(default_factory=dict)
    more: bool = False
    retryable: bool = False
    retry_after_s: float | None = None
    error: str | None = None
    in_doubt: bool = False


class Receiver(Protocol):
    name: str

    def send(
        self, notification: Notification, thread: Thread, step: int, *, in_flight: bool = False
    ) -> Delivery:
        """Perform step `step` (0-based) of `notification`: one external call. `in_flight` says
        this step was begun before and never confirmed (a crash or a timeout): a receiver that
        can find its effect (Slack, by message metadata) adopts it instead of repeating it."""
        ...


@runtime_checkable
class GatheringReceiver(Protocol):
    """A receiver that gathers some notifications of a delivery run into one message (the
    console's "still failing" line), or one connection (email's SMTP session): told when its
    share of the run is over."""

    def end_delivery(self) -> None: ...


def retry_after_seconds(value: str | None, now: dt.datetime | None = None) -> float | None:
    """A Retry-After header in seconds: a number of seconds, or an HTTP date (RFC 9110) taken
    from `now` (default: the clock). None when absent or unreadable: the backoff decides."""
    if value is None or not value.strip():
        return None
    text = value.strip()
    try:
        return max(0.0, float(text))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.UTC)
    return max(0.0, (when - (now or utc_now())).total_seconds())
