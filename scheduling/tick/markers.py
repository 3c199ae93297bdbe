"""Readiness marker files (`_SUCCESS`): where a guarded check's marker goes, its content, and
writing it atomically. Used by scheduling/tick/readiness.py after a run is recorded."""

from __future__ import annotations

import datetime as dt
import json
import os
import uuid
from pathlib import Path
from urllib.parse import unquote, urlsplit

from checkers.outcome import CheckOutcome
from checkers.project_db import as_utc, utc_now
from checks.assets import Guarded


def marker_content(
    asset: str,
    outcome: CheckOutcome,
    window: tuple[dt.datetime | None, dt.datetime],
    run_id: int | None,
) -> dict[str, object]:
    return {
        "asset": asset,
        "check": outcome.check,
        "window_start": window[0].isoformat() if window[0] else None,
        "window_end": window[1].isoformat(),
        "run_id": run_id,
        "status": outcome.status.value,
        "failing": outcome.failing,
        "total": outcome.total,
        "written_at": utc_now().isoformat(),
    }


def _local(path: str) -> Path | None:
    """A path the local filesystem API can write: plain or `file:`; None for other schemes
    (s3a://, hdfs://...) and globs."""
    parts = urlsplit(path)
    if parts.scheme == "file":
        path = unquote(parts.path)
    elif len(parts.scheme) > 1:  # one letter: a Windows drive
        return None
    return None if any(c in path for c in "*?[{") else Path(path)


def marker_path(check: object, guards: Guarded) -> Path | None:
    """Where the marker of `check` (an instance, its sources built for the run) goes: in
    `marker_dir`, else beside the data of its only file source; None when there is none."""
    from checkers.parsers import CsvParser, JsonParser, ParquetParser, resolve

    if guards.marker is None:
        return None
    if guards.marker_dir is not None:
        return Path(resolve(guards.marker_dir)).absolute() / guards.marker
    sources = check.sources().values()  # type: ignore[attr-defined]
    files = [p for p in sources if isinstance(p, CsvParser | JsonParser | ParquetParser)]
    data = _local(resolve(files[0].path)) if len(files) == 1 else None
    if data is None:
        return None
    data = data.absolute()
    if data.is_dir():
        return data / guards.marker
    return data.parent / f"_{data.name}{guards.marker}"


def read_marker(path: str | Path) -> dict[str, object] | None:
    """The content of a marker file; None when it is absent or unreadable."""
    try:
        content = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return content if isinstance(content, dict) else None


def window_end(content: dict[str, object] | None) -> dt.datetime | None:
    try:
        return as_utc(dt.datetime.fromisoformat(str(content["window_end"])))  # type: ignore[index]
    except (TypeError, KeyError, ValueError):
        return None


def write_marker(path: Path, content: dict[str, object]) -> None:
    """Atomically: a hidden temporary file beside it (Spark skips names starting with .),
    flushed to disk, then renamed over the marker."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
    try:
        with open(temporary, "w", encoding="utf-8") as out:
            json.dump(content, out, sort_keys=True)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)
