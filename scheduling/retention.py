"""Retention (`dq prune`): what the project database and the state directory keep, with safe
defaults. Runs and resolved incidents (with their sent notifications) 90 days, done window
claims and spool replays 90 days, failing-row files 30 days. Never pruned: open incidents and
their runs, pending notifications, each check's last window end, incremental checks' stored
states and the metric history (with its annotations) that anomaly checks learn from."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from pathlib import Path

from alerting.retention import prune_incidents, prune_runs
from scheduling.settings import Settings
from scheduling.tables import claims, spool_replays


@dataclass(frozen=True)
class Retention:
    """Days each kind is kept."""

    runs_days: int = 90
    incidents_days: int = 90
    claims_days: int = 90
    failing_rows_days: int = 30

    def __post_init__(self) -> None:
        for name, days in vars(self).items():
            if not isinstance(days, int) or days < 1:
                raise ValueError(f"retention {name} must be a whole number of days, at least 1")


@dataclass
class Pruned:
    """How many of each kind one prune removed."""

    counts: dict[str, int] = field(default_factory=dict)

    def line(self) -> str:
        return ", ".join(f"{count} {kind}" for kind, count in self.counts.items())


def prune(settings: Settings, now: dt.datetime, retention: Retention | None = None) -> Pruned:
    """Remove what `retention` no longer keeps, in one transaction, then old failing-row files."""
    keep = retention or Retention()
    days = dt.timedelta(days=1)
    pruned = Pruned()
    with settings.engine.begin() as connection:
        pruned.counts["runs"] = prune_runs(connection, now - keep.runs_days * days)
        pruned.counts["resolved incidents"] = prune_incidents(
            connection, now - keep.incidents_days * days
        )
        claims_before = now - keep.claims_days * days
        pruned.counts["window claims"] = connection.execute(
            claims.delete().where(claims.c.status == "done", claims.c.finished_at < claims_before)
        ).rowcount
        connection.execute(
            spool_replays.delete().where(spool_replays.c.replayed_at < claims_before)
        )
    rows = settings.failing_rows
    directory = rows.directory if rows is not None else None
    pruned.counts["failing-row files"] = _prune_files(
        directory, now - keep.failing_rows_days * days
    )
    return pruned


def _prune_files(directory: Path | None, before: dt.datetime) -> int:
    if directory is None or not directory.is_dir():
        return 0
    removed = 0
    for path in directory.glob("*/*.jsonl"):
        if path.stat().st_mtime < before.timestamp():
            path.unlink(missing_ok=True)
            removed += 1
    return removed
