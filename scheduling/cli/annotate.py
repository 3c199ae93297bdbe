"""`dq history annotate CHECK`: tell a check's anomaly detection about a period of its metric
history. `--exclude FROM..TO` leaves the points out of training (an outage, a migration),
`--expected AT` trains on them and accepts their values (a planned backfill), `--baseline-since
AT` forgets every point before AT (a new normal). A date means its whole day (UTC); FROM..TO
between dates covers both days; between times it is [FROM, TO)."""

from __future__ import annotations

import argparse
import datetime as dt
import sys
from typing import TYPE_CHECKING

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from alerting.tables import runs
from scheduling.cli.exits import EXIT_OK, EXIT_USAGE
from scheduling.cli.times import parse_time
from scheduling.config import os_user

if TYPE_CHECKING:
    from checkers.metrics.annotations import Period

DAY = dt.timedelta(days=1)


def moment(text: str) -> tuple[dt.datetime, dt.datetime]:
    """[start, end) of `text`: a whole day (UTC) for a date, the instant for a time."""
    text = text.strip()
    try:
        if len(text) == 10:  # 2013-12-24
            day = dt.datetime.combine(dt.date.fromisoformat(text), dt.time(), dt.UTC)
            return day, day + DAY
        at = parse_time(text)
    except ValueError:
        raise ValueError(f"not an ISO date or time: {text!r} (e.g. 2013-12-24)") from None
    return at, at + dt.timedelta(microseconds=1)


def period_of(args: argparse.Namespace) -> Period:
    """The one period the arguments ask for (ValueError: what is wrong)."""
    from checkers.metrics.annotations import BASELINE, EXCLUDE, EXPECTED, Period

    given = [a for a in ("exclude", "expected", "baseline_since") if getattr(args, a)]
    if len(given) != 1:
        raise ValueError(
            "give exactly one of --exclude FROM..TO, --expected AT, --baseline-since AT"
        )
    note = args.reason or ""
    if args.exclude:
        first, sep, last = args.exclude.partition("..")
        if not sep:
            raise ValueError(f"--exclude takes FROM..TO, got {args.exclude!r}")
        starts, _ = moment(first)
        ends = moment(last)[1] if len(last.strip()) == 10 else moment(last)[0]
        if ends <= starts:
            raise ValueError(f"--exclude {args.exclude}: TO must come after FROM")
        return Period(EXCLUDE, starts, ends, note)
    if args.expected:
        starts, ends = moment(args.expected)
        return Period(EXPECTED, starts, ends, note)
    return Period(BASELINE, moment(args.baseline_since)[0], None, note)


def annotate_command(args: argparse.Namespace, words: list[str]) -> int:
    from checkers.metrics.annotations import add_period

    if len(words) != 2:
        print("dq history annotate: name one check: dq history annotate CHECK ...", file=sys.stderr)
        return EXIT_USAGE
    check = words[1]
    try:
        period = period_of(args)
    except ValueError as exc:
        print(f"dq history annotate: {exc}", file=sys.stderr)
        return EXIT_USAGE
    engine = args.project.settings.engine
    if not _has_runs(engine, check) and check not in args.project.checks():
        print(f"dq history annotate: no check named {check!r}", file=sys.stderr)
        return EXIT_USAGE
    who = args.by or os_user()
    with engine.begin() as connection:
        add_period(connection, check, period, created_by=who, now=parse_time(None))
    print(f"{check}: {describe(period)} (by {who})")
    return EXIT_OK


def _has_runs(engine: Engine, check: str) -> bool:
    """Whether `check` has recorded runs (a check no longer defined still has history)."""
    with engine.connect() as connection:
        found = connection.execute(
            sa.select(runs.c.id).where(runs.c.check_name == check).limit(1)
        ).first()
    return found is not None


def period_lines(engine: Engine, check: str) -> list[str]:
    """`dq history CHECK`'s last lines: the periods annotated on its metric history."""
    from checkers.metrics.annotations import load_periods

    with engine.connect() as connection:
        periods = load_periods(connection, check)
    return [f"{'annotated period':32}   {describe(p)}" for p in periods]


def describe(period: Period) -> str:
    from checkers.metrics.annotations import BASELINE

    said = f": {period.note}" if period.note else ""
    if period.kind == BASELINE:
        return f"baseline since {period.starts_at.isoformat()}{said}"
    assert period.ends_at is not None
    return f"{period.kind} {period.starts_at.isoformat()}..{period.ends_at.isoformat()}{said}"


def add_annotate_options(history: argparse.ArgumentParser) -> None:
    """`dq history annotate CHECK` options, on `dq history`."""
    history.add_argument("--exclude", metavar="FROM..TO", help="annotate: leave out of training")
    history.add_argument("--expected", metavar="AT", help="annotate: train on it, accept its value")
    history.add_argument(
        "--baseline-since", metavar="AT", help="annotate: forget the history before AT"
    )
    history.add_argument("--reason", help="annotate: why (shown with the verdicts)")
    history.add_argument("--by", help="annotate: who (default $USER)")
