"""Run history: the recorded outcomes of a check, newest first."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from alerting.tables import runs
from checkers.outcome import CheckOutcome
from checkers.project_db import as_utc


@dataclass(frozen=True)
class RunRecord:
    outcome: CheckOutcome
    window_start: dt.datetime | None
    window_end: dt.datetime | None


def history(engine: Engine, check: str | None = None, *, limit: int = 50) -> list[RunRecord]:
    query = (
        sa.select(runs.c.outcome, runs.c.window_start, runs.c.window_end)
        .order_by(runs.c.id.desc())
        .limit(limit)
    )
    if check is not None:
        query = query.where(runs.c.check_name == check)
    with engine.connect() as connection:
        rows = connection.execute(query).all()
    return [RunRecord(CheckOutcome.from_json(o), as_utc(s), as_utc(e)) for o, s, e in rows]
