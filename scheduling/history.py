"""Run history: the recorded outcomes of a check, newest first, with the annotations people put
on each run's metric points (triage's "this is expected")."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

from alerting.tables import runs
from checkers.engine_tables import metric_annotations
from checkers.outcome import CheckOutcome
from checkers.project_db import as_utc


@dataclass(frozen=True)
class RunRecord:
    outcome: CheckOutcome
    window_start: dt.datetime | None
    window_end: dt.datetime | None
    annotations: tuple[str, ...] = ()  # "expected by @ana: the backfill (1 metric point)"


def history(engine: Engine, check: str | None = None, *, limit: int = 50) -> list[RunRecord]:
    query = (
        sa.select(runs.c.id, runs.c.outcome, runs.c.window_start, runs.c.window_end)
        .order_by(runs.c.id.desc())
        .limit(limit)
    )
    if check is not None:
        query = query.where(runs.c.check_name == check)
    with engine.connect() as connection:
        rows = connection.execute(query).all()
        notes = _annotations(connection, [r.id for r in rows])
    return [
        RunRecord(CheckOutcome.from_json(o), as_utc(s), as_utc(e), tuple(notes.get(i, ())))
        for i, o, s, e in rows
    ]


def _annotations(connection: Connection, run_ids: list[int]) -> dict[int, list[str]]:
    a = metric_annotations
    found = connection.execute(
        sa.select(a.c.run_id, a.c.kind, a.c.created_by, a.c.note, sa.func.count())
        .where(a.c.run_id.in_(run_ids))
        .group_by(a.c.run_id, a.c.kind, a.c.created_by, a.c.note)
        .order_by(a.c.run_id)
    )
    notes: dict[int, list[str]] = {}
    for run_id, kind, by, note, points in found:
        noun = "metric point" if points == 1 else "metric points"
        notes.setdefault(run_id, []).append(f"{kind} by @{by}: {note} ({points} {noun})")
    return notes
