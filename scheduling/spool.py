"""The local spool: outcomes a run could not record because the project database was unavailable,
one fsynced JSON line each (`$DQ_STATE_DIR/spool/outcomes.jsonl`). Append-only; a replay removes
the lines it recorded by atomically replacing the file, under a lock shared with appenders."""

from __future__ import annotations

import datetime as dt
import fcntl
import json
import logging
import os
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from checkers.outcome import CheckOutcome
from checkers.private_files import private_directory, private_file

log = logging.getLogger(__name__)

SPOOL_FILE = "outcomes.jsonl"
#: Lines a replay could not record for another reason than an outage (kept, never retried).
REJECTED_FILE = "rejected.jsonl"


@dataclass(frozen=True)
class SpoolEntry:
    """One outcome to record later, with what recording it needs: its window, the run's time and
    the links its alert carries. `id` makes the replay idempotent."""

    check: str
    outcome: CheckOutcome
    now: dt.datetime
    window: tuple[dt.datetime, dt.datetime] | None = None
    links: dict[str, str] = field(default_factory=dict)
    id: str = field(default_factory=lambda: uuid.uuid4().hex)

    def to_json(self) -> str:
        return json.dumps(
            {
                "id": self.id,
                "check": self.check,
                "outcome": self.outcome.to_dict(),
                "now": self.now.isoformat(),
                "window": [w.isoformat() for w in self.window] if self.window else None,
                "links": self.links,
            },
            sort_keys=True,
        )

    @classmethod
    def from_json(cls, text: str) -> SpoolEntry:
        data = json.loads(text)
        window = data.get("window")
        return cls(
            check=data["check"],
            outcome=CheckOutcome.from_dict(data["outcome"]),
            now=dt.datetime.fromisoformat(data["now"]),
            window=(
                (dt.datetime.fromisoformat(window[0]), dt.datetime.fromisoformat(window[1]))
                if window
                else None
            ),
            links=dict(data.get("links") or {}),
            id=data["id"],
        )


def _fsync_directory(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class Spool:
    """The spool file in `directory`. `drain` hands each entry, oldest first, to a recorder."""

    def __init__(self, directory: str | Path) -> None:
        self.directory = Path(directory)
        self.path = self.directory / SPOOL_FILE
        self.rejected = self.directory / REJECTED_FILE

    @contextmanager
    def _locked(self) -> Iterator[None]:
        # A separate lock file: the spool itself is replaced by a replay, and an appender that
        # opened the old file would write into an unlinked inode.
        private_directory(self.directory)
        with private_file(self.directory / "spool.lock").open("a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def append(self, entry: SpoolEntry) -> None:
        """Append `entry` durably (fsync before returning)."""
        with self._locked():
            created = not self.path.exists()
            fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o600)
            try:
                size = os.fstat(fd).st_size
                torn = size > 0 and os.pread(fd, 1, size - 1) != b"\n"  # a crash mid-append
                os.write(fd, (("\n" if torn else "") + entry.to_json() + "\n").encode())
                os.fsync(fd)
            finally:
                os.close(fd)
            if created:
                _fsync_directory(self.directory)

    def pending(self) -> bool:
        try:
            return self.path.stat().st_size > 0
        except FileNotFoundError:
            return False

    def entries(self) -> list[SpoolEntry]:
        with self._locked():
            return [SpoolEntry.from_json(line) for line in self._lines()]

    def _lines(self) -> list[str]:
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return []
        return [line for line in text.splitlines() if line.strip()]

    def drain(self, record: Callable[[SpoolEntry], bool]) -> int:
        """Replay: `record(entry)` returns True once the entry is recorded (or was already), False
        to stop (the database is unavailable again: this entry and the later ones stay). An entry
        that cannot be read or whose `record` raises is moved to `rejected.jsonl`, so one bad line
        never blocks the others. Returns how many entries were recorded."""
        with self._locked():
            lines = self._lines()
            done = 0
            kept = 0
            rejected: list[str] = []
            for index, line in enumerate(lines):
                try:
                    entry = SpoolEntry.from_json(line)
                    recorded = record(entry)
                except Exception as exc:  # quarantine the line, say why, go on
                    log.error("spooled outcome not replayable, moved to %s: %s", self.rejected, exc)
                    rejected.append(json.dumps({"error": str(exc), "line": line}))
                    continue
                if not recorded:
                    kept = len(lines) - index
                    break
                done += 1
            if rejected:
                with self.rejected.open("a", encoding="utf-8") as out:
                    out.write("".join(r + "\n" for r in rejected))
                    out.flush()
                    os.fsync(out.fileno())
            if done or rejected:
                self._replace(lines[len(lines) - kept :] if kept else [])
            return done

    def _replace(self, lines: list[str]) -> None:
        if not lines:
            self.path.unlink(missing_ok=True)
        else:
            temporary = self.path.with_suffix(".tmp")
            with temporary.open("w", encoding="utf-8") as out:
                out.write("".join(line + "\n" for line in lines))
                out.flush()
                os.fsync(out.fileno())
            os.replace(temporary, self.path)
        _fsync_directory(self.directory)
