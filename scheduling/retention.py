"""Retention (`dq prune`, and daily by the tick with dq.toml's [retention]): what the project
database and the state directory keep, with safe defaults. Runs and resolved incidents (with
their sent notifications) 90 days, done window claims and spool replays 90 days, failing-row
files 30 days. Never pruned: open incidents and their runs, pending notifications, each check's
last window end, incremental checks' stored states and the metric history (with its
annotations) that anomaly checks learn from."""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path

from alerting.retention import prune_incidents, prune_runs
from checkers.dq_toml import DqTomlError
from checkers.project_db import database_clock
from scheduling.claims import ClaimState, claim, mark_done, new_holder, release
from scheduling.settings import Settings
from scheduling.tables import claims, spool_replays

log = logging.getLogger(__name__)


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


def retention_from_document(document: Mapping[str, object]) -> Retention:
    """dq.toml's [retention] (each key optional, the default where absent); a value that is
    not a whole number of days, at least 1, is refused naming its key."""
    table = document.get("retention", {})
    given = dict(table) if isinstance(table, Mapping) else {}
    known = {f.name for f in fields(Retention)}
    for key, days in given.items():
        if key not in known:
            continue  # unknown keys are refused with the others (alerting.config)
        if isinstance(days, bool) or not isinstance(days, int) or days < 1:
            raise DqTomlError(
                f"dq.toml: [retention] {key} must be a whole number of days, at least 1, "
                f"got {days!r:.40}",
                key=("retention", key),
            )
    return Retention(**{k: v for k, v in given.items() if k in known})


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


#: The claim that makes the tick's prune once a day across runners (not a check's name).
PRUNE_CLAIM = "dq:prune"


def prune_daily(settings: Settings, now: dt.datetime) -> Pruned | None:
    """The tick's prune: the first tick of each UTC day prunes with dq.toml's [retention]; the
    day is claimed like a check's window, so one runner does it however many tick (and a runner
    that dies while pruning leaves it to the next once its lease runs out). None when another
    runner did it, or holds it, today."""
    document = settings.config.document if settings.config is not None else {}
    retention = retention_from_document(document)
    start = dt.datetime.combine(now.astimezone(dt.UTC).date(), dt.time(), tzinfo=dt.UTC)
    clock, holder = database_clock(settings.engine), new_holder()
    day = claim(
        settings.engine,
        PRUNE_CLAIM,
        (start, start + dt.timedelta(days=1)),
        holder=holder,
        lease=dt.timedelta(hours=1),
        now=clock(),
    )
    if day.state is not ClaimState.CLAIMED:
        return None
    try:
        pruned = prune(settings, now, retention)
    except BaseException:
        release(settings.engine, [day], holder=holder, now=clock())
        raise
    with settings.engine.begin() as connection:
        mark_done(connection, day, holder=holder, now=clock(), outcome_status="passed")
    log.info("daily prune: %s", pruned.line())
    return pruned
