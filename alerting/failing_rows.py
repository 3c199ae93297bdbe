"""The failing-dataset logger: each failed run's failing elements (the bounded sample, masked as
the check asks) written as JSON lines where an alert can link to them."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

from checkers.outcome import CheckOutcome


class FailingRowsLog:
    """Writes `<directory>/<check>/<run time>.jsonl`; the link is `base_url` + that path when a
    web server publishes the directory, else a file URL."""

    def __init__(self, directory: str | Path, *, base_url: str | None = None) -> None:
        self.directory = Path(directory)
        self.base_url = base_url.rstrip("/") if base_url else None

    def write(self, outcome: CheckOutcome, now: dt.datetime) -> str | None:
        """The link to the rows, or None when the outcome has no failing sample."""
        if not outcome.sample:
            return None
        relative = Path(outcome.check) / f"{now.strftime('%Y%m%dT%H%M%SZ')}.jsonl"
        target = self.directory / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        with target.open("w", encoding="utf-8") as out:
            for row in outcome.to_dict()["sample"]:  # type: ignore[attr-defined]
                out.write(json.dumps(row, sort_keys=True) + "\n")
        if self.base_url:
            return f"{self.base_url}/{relative.as_posix()}"
        return target.resolve().as_uri()
