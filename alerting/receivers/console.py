"""Receivers for the embedded default: the log, and a JSON-lines file."""

from __future__ import annotations

import json
import logging
from pathlib import Path

from alerting.model import Notification
from alerting.receivers.base import Delivery, Thread
from alerting.render import headline, title

log = logging.getLogger("dq.alerts")


class ConsoleReceiver:
    """Logs one line per notification (logger `dq.alerts`)."""

    def __init__(self, name: str = "console") -> None:
        self.name = name

    def send(
        self, notification: Notification, thread: Thread, step: int, *, in_flight: bool = False
    ) -> Delivery:
        log.warning("%s: %s", title(notification), headline(notification))
        return Delivery(ok=True, steps_done=1)


class FileReceiver:
    """Appends each notification as one JSON line to `path`."""

    def __init__(self, name: str, path: str | Path) -> None:
        self.name = name
        self.path = Path(path)

    def send(
        self, notification: Notification, thread: Thread, step: int, *, in_flight: bool = False
    ) -> Delivery:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a", encoding="utf-8") as out:
                record = json.loads(notification.to_json())
                record.update(
                    title=title(notification),
                    headline=headline(notification),
                    dedup_key=notification.dedup_key,
                )
                out.write(json.dumps(record, sort_keys=True) + "\n")
        except OSError as exc:
            return Delivery(ok=False, retryable=True, error=f"cannot write {self.path}: {exc}")
        return Delivery(ok=True, steps_done=1)
