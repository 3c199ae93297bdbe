"""What people say about a metric's history, and the one place it is applied before an anomaly
strategy sees the series. On points (dq_metric_annotations, written by triage's "this is
expected"): an expected point is normal. On periods of a check's history (dq_metric_periods,
written by `dq history annotate`): `expected` (train on the points, accept their values),
`exclude` (drop the points from training), `baseline` (forget every point before it). Maintenance
windows exclude the points whose time they cover (given as `excluded_when`)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from checkers.engine_tables import metric_annotations, metric_periods, metrics_table
from checkers.project_db import as_utc

EXPECTED = "expected"
EXCLUDE = "exclude"
BASELINE = "baseline"
PERIOD_KINDS = (EXPECTED, EXCLUDE, BASELINE)


def expected_ids(connection: Connection, analyzer: str, source_table: str) -> set[int]:
    """Ids of the points of `analyzer` on `source_table` annotated as expected."""
    a, m = metric_annotations, metrics_table
    rows = connection.execute(
        sa.select(a.c.metric_id)
        .join(m, m.c.id == a.c.metric_id)
        .where(a.c.kind == EXPECTED, m.c.analyzer == analyzer, m.c.source_table == source_table)
    )
    return {int(i) for i in rows.scalars()}


@dataclass(frozen=True)
class Period:
    """`kind` over [starts_at, ends_at) of a check's history (a baseline has no end)."""

    kind: str
    starts_at: dt.datetime
    ends_at: dt.datetime | None = None
    note: str = ""

    def covers(self, time: dt.datetime) -> bool:
        if self.kind == BASELINE:
            return False
        return self.starts_at <= time and (self.ends_at is None or time < self.ends_at)


@dataclass(frozen=True)
class SeriesPoint:
    """One point of a metric's history: `failed` when its constraint failed and nobody said it
    was expected; `expected` when a person annotated the point itself."""

    time: dt.datetime
    value: float
    failed: bool = False
    expected: bool = False


@dataclass(frozen=True)
class Training:
    """What a strategy sees: the history (None for a gap, for strategies that keep calendar
    positions), the values people said are expected, and why the judged point itself is not
    judged (inside an exclude or expected period), if it is not."""

    history: list[float | None]
    expected: list[float]
    skip_reason: str | None = None


@dataclass(frozen=True)
class Feedback:
    """The periods people annotated on a check's history, and the maintenance windows' test."""

    periods: tuple[Period, ...] = ()
    excluded_when: Callable[[dt.datetime], str | None] | None = None

    def training(
        self,
        points: Sequence[SeriesPoint],
        judged_at: dt.datetime,
        *,
        exclude_failed: bool,
        keeps_positions: bool,
    ) -> Training:
        """The history a strategy judges the point at `judged_at` against."""
        since = max((p.starts_at for p in self.periods if p.kind == BASELINE), default=None)
        history: list[float | None] = []
        expected: list[float] = []
        for point in points:
            if since is not None and point.time < since:
                continue  # forgotten: the baseline starts later
            kind = self._kind(point.time)
            if kind == EXCLUDE:
                keep = False
            elif kind == EXPECTED or point.expected:
                expected.append(point.value)
                keep = True
            else:
                keep = not (exclude_failed and point.failed)
            if keep:
                history.append(point.value)
            elif keeps_positions:
                history.append(None)
        return Training(history, expected, self._skip_reason(judged_at))

    def _kind(self, time: dt.datetime) -> str | None:
        if self.excluded_when is not None and self.excluded_when(time):
            return EXCLUDE
        for period in self.periods:
            if period.covers(time):
                return period.kind
        return None

    def _skip_reason(self, time: dt.datetime) -> str | None:
        if self.excluded_when is not None and (why := self.excluded_when(time)):
            return f"not judged: in a maintenance window ({why})"
        for period in self.periods:
            if period.covers(time):
                said = f": {period.note}" if period.note else ""
                return f"not judged: annotated {period.kind}{said}"
        return None


def load_periods(connection: Connection, check: str) -> tuple[Period, ...]:
    """The periods annotated on `check`'s history, oldest first."""
    p = metric_periods
    if not sa.inspect(connection).has_table(p.name):
        return ()
    rows = connection.execute(
        sa.select(p.c.kind, p.c.starts_at, p.c.ends_at, p.c.note)
        .where(p.c.check_name == check)
        .order_by(p.c.id)
    )
    return tuple(
        Period(kind, as_utc(starts), as_utc(ends), note) for kind, starts, ends, note in rows
    )


def add_period(
    connection: Connection,
    check: str,
    period: Period,
    *,
    created_by: str,
    now: dt.datetime,
) -> None:
    """Store `period` on `check`'s history."""
    if period.kind not in PERIOD_KINDS:
        raise ValueError(f"kind must be one of {', '.join(PERIOD_KINDS)}, got {period.kind!r}")
    if period.ends_at is not None and period.ends_at <= period.starts_at:
        raise ValueError("a period ends after it starts")
    connection.execute(
        metric_periods.insert().values(
            check_name=check,
            kind=period.kind,
            starts_at=period.starts_at,
            ends_at=period.ends_at,
            note=period.note,
            created_by=created_by,
            created_at=now,
        )
    )
