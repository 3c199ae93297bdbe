"""Receivers for the embedded default: the log, and a JSON-lines file."""

from __future__ import annotations

import json
import logging
import threading
from pathlib import Path

from alerting.model import Notification, NotifyReason
from alerting.receivers.base import Delivery, Thread
from alerting.render import headline, still_failing, title
from checkers.private_files import private_file

log = logging.getLogger("dq.alerts")


class ConsoleReceiver:
    """Logs one line per notification (logger `dq.alerts`), except "still failing" repeats: a
    delivery run's repeats end it as one line (`still_failing`), so a console that hears every
    open incident every run is not buried; new, escalated, lowered and resolved ones still get
    their own line."""

    def __init__(self, name: str = "console") -> None:
        self.name = name
        self._repeats: list[Notification] = []
        self._lock = threading.Lock()

    def send(
        self, notification: Notification, thread: Thread, step: int, *, in_flight: bool = False
    ) -> Delivery:
        if notification.reason is NotifyReason.REPEAT:
            with self._lock:
                self._repeats.append(notification)
        else:
            log.warning("%s: %s", title(notification), headline(notification))
        return Delivery(ok=True, steps_done=1)

    def end_delivery(self) -> None:
        """The delivery run is over: log its repeats, if any, as one line."""
        with self._lock:
            repeats, self._repeats = self._repeats, []
        if repeats:
            log.warning("%s", still_failing(repeats))


class FileReceiver:
    """Appends each notification as one JSON line to `path`."""

    def __init__(self, name: str, path: str | Path) -> None:
        self.name = name
        self.path = Path(path)

    def send(
        self, notification: Notification, thread: Thread, step: int, *, in_flight: bool = False
    ) -> Delivery:
        try:
            with private_file(self.path).open("a", encoding="utf-8") as out:
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
