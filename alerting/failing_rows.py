"""The failing-dataset logger: each failed run's failing elements (the bounded sample, masked as
the check asks) written as JSON lines where an alert can link to them: under `base_url` when a
web server (or a bucket's website) publishes the directory, else as a file on this machine."""

from __future__ import annotations

import datetime as dt
import json
import os
import socket
from pathlib import Path

from checkers.outcome import CheckOutcome, json_safe
from checkers.private_files import PRIVATE_FILE, private_directory
from checkers.sample_limits import IN_FILE, bounded_rows

#: Where failing rows are published, and where they are written (dq.toml [failing_rows]).
FAILING_ROWS_URL_ENV = "DQ_FAILING_ROWS_URL"
FAILING_ROWS_DIR_ENV = "DQ_FAILING_ROWS_DIR"


def failing_rows_link(
    relative: str,
    *,
    directory: str | Path,
    base_url: str | None = None,
    start: str | Path | None = None,
) -> str:
    """The link to failing rows saved at `relative` (`CheckOutcome.failing_rows`, a path under
    `directory`): under `base_url` when they are published; else relative to `start` (the
    directory of a report that links to them); else a file URL."""
    if base_url:
        return f"{base_url.rstrip('/')}/{relative}"
    target = Path(directory) / relative
    if start is not None:
        return Path(os.path.relpath(target.resolve(), Path(start).resolve())).as_posix()
    return target.resolve().as_uri()


class FailingRowsLog:
    """Writes `<directory>/<check>/<run time>.jsonl`; the link is `base_url` + that path when a
    web server publishes the directory, else a file URL (and its label says so)."""

    def __init__(self, directory: str | Path, *, base_url: str | None = None) -> None:
        self.directory = Path(directory)
        self.base_url = base_url.rstrip("/") if base_url else None

    @property
    def label(self) -> str:
        """The link's label in alerts: a file URL opens only on the machine that wrote it."""
        if self.base_url:
            return "failing rows"
        return (
            f"failing rows (a file on {socket.gethostname()}: "
            f"set {FAILING_ROWS_URL_ENV} or [failing_rows] base_url to publish them)"
        )

    def save(self, outcome: CheckOutcome, now: dt.datetime) -> str | None:
        """Write the outcome's failing sample; its path relative to the directory (POSIX), or
        None when the outcome has no sample."""
        if not outcome.sample:
            return None
        relative = Path(outcome.check) / f"{now.strftime('%Y%m%dT%H%M%SZ')}.jsonl"
        target = self.directory / relative
        private_directory(target.parent)  # samples hold unmasked columns: owner-only
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, PRIVATE_FILE)
        os.fchmod(fd, PRIVATE_FILE)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            rows = [json_safe(row) for row in outcome.sample]
            for row in bounded_rows(rows, IN_FILE):  # type: ignore[arg-type]
                out.write(json.dumps(row, sort_keys=True) + "\n")
        return relative.as_posix()

    def link(self, relative: str, *, start: str | Path | None = None) -> str:
        """The link to rows saved at `relative` (see `failing_rows_link`)."""
        return failing_rows_link(
            relative, directory=self.directory, base_url=self.base_url, start=start
        )

    def write(self, outcome: CheckOutcome, now: dt.datetime) -> str | None:
        """Save the sample; the link to it, or None when there is none."""
        relative = self.save(outcome, now)
        return None if relative is None else self.link(relative)
