"""The receiver contract: render a notification and send it, reporting what happened. Retries,
ordering and dedup are the delivery stage's job, not the receiver's."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from alerting.model import Notification

#: Receiver-specific memory of an incident (Slack channel and root ts, first Message-ID...).
Thread = dict[str, object]


@dataclass(frozen=True)
class Delivery:
    """The result of one send attempt. `steps_done` counts the calls that succeeded (a Slack
    update is a reply plus an edit of the root), so a retry resumes after them; `thread` is the
    receiver's updated memory of the incident, saved even when a later step failed."""

    ok: bool
    steps_done: int = 0
    thread: Thread = field(default_factory=dict)
    retryable: bool = False
    retry_after_s: float | None = None
    error: str | None = None


class Receiver(Protocol):
    name: str

    def send(self, notification: Notification, thread: Thread, steps_done: int) -> Delivery:
        """Deliver `notification`, skipping its first `steps_done` steps."""
        ...
