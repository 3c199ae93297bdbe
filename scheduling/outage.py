"""When the project database is unavailable (down, unreachable, read-only): each outcome still
reaches stderr and the local spool, the run reports an infrastructure failure, and the next run
that can write replays the spool through the normal record path before anything else."""

from __future__ import annotations

import datetime as dt
import re
import sqlite3
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

import sqlalchemy as sa
from sqlalchemy.engine import URL, Connection, Engine

from alerting.recording import record_in_transaction
from alerting.render import reason, state
from checkers.outcome import CheckOutcome
from scheduling.schema import migrate
from scheduling.spool import Spool, SpoolEntry
from scheduling.tables import spool_replays
from scheduling.windows import last_window_ends, remember_window_ends

if TYPE_CHECKING:
    from scheduling.settings import Settings

_UNAVAILABLE = (
    sa.exc.OperationalError,  # cannot connect, disk full, SQLite read-only or locked
    sa.exc.InterfaceError,
    sa.exc.InternalError,  # PostgreSQL: read-only transaction
    sa.exc.TimeoutError,  # connection pool exhausted
)


def unavailable(exc: BaseException) -> bool:
    """Whether `exc` says the project database cannot be used now, as opposed to a conflict or a
    bug (IntegrityError, ProgrammingError...) that must surface. A corrupt or foreign SQLite file
    ("file is not a database", "disk image is malformed") is an outage too."""
    return isinstance(exc, _UNAVAILABLE) or corrupt_sqlite(exc)


def corrupt_sqlite(exc: BaseException) -> bool:
    """Whether `exc` is SQLite saying its file is not a (sound) database."""
    original = getattr(exc, "orig", exc)
    return type(original) is sqlite3.DatabaseError  # its subclasses are conflicts and bugs


def describe(exc: BaseException, url: URL) -> str:
    """The database and the driver's first line, never the SQL, its parameters or a password."""
    original = getattr(exc, "orig", None) or exc
    lines = str(original).strip().splitlines()
    text = f"{type(original).__name__}: {lines[0] if lines else ''}".rstrip(": ")
    if url.password:
        text = text.replace(str(url.password), "***")
    text = re.sub(r"(://[^:/@\s]*:)[^@\s]+@", r"\1***@", text)
    return f"{url.render_as_string(hide_password=True)}: {text}"


def database_unavailable(settings: Settings, exc: BaseException) -> None:
    """Remember for the rest of the run that the database is unavailable; say so when it was
    usable until now (a failed retry during the same outage stays quiet)."""
    known, settings.database_error = settings.database_error, describe(exc, settings.engine.url)
    if known is not None:
        return
    print(
        f"dq: the project database is unavailable ({settings.database_error})",
        file=sys.stderr,
        flush=True,
    )


def database_ready(settings: Settings) -> bool:
    """Whether the database can be used, trying again (and migrating) after an outage."""
    if settings.database_error is None:
        return True
    try:
        migrate(settings.engine)
    except sa.exc.SQLAlchemyError as exc:
        if not unavailable(exc):
            raise
        database_unavailable(settings, exc)
        return False
    settings.database_error = None
    return True


@contextmanager
def tolerated(settings: Settings) -> Iterator[None]:
    """Run a database step that the run can do without (reading due windows, delivering): an
    outage ends the step and is remembered, anything else surfaces."""
    try:
        yield
    except sa.exc.SQLAlchemyError as exc:
        if not unavailable(exc):
            raise
        database_unavailable(settings, exc)


def alert_line(outcome: CheckOutcome) -> str:
    """The console receiver's line, for an outcome no outbox can carry."""
    words = state(outcome, outcome.level)
    return f"[DQ] {words}: {outcome.check}: {reason(outcome)} (not recorded, spooled)"


def record_or_spool(
    settings: Settings,
    outcome: CheckOutcome,
    now: dt.datetime,
    *,
    record: Callable[[Connection], object],
    window: tuple[dt.datetime, dt.datetime] | None = None,
    links: dict[str, str] | None = None,
) -> bool:
    """Record `outcome` by `record` (the tick's recording: run row, incident, outbox, claim) in
    one transaction, retried once after a concurrent run opened the same incident; while the
    database is unavailable, spool it and say so on stderr instead. Returns whether it was
    recorded."""
    if settings.database_error is None:
        try:
            record_in_transaction(settings.engine, record)
            return True
        except sa.exc.SQLAlchemyError as exc:
            if not unavailable(exc):
                raise
            database_unavailable(settings, exc)
    spool = Spool(settings.spool_dir)
    entry = SpoolEntry(outcome.check, outcome, now, window, dict(links or {}))
    try:
        spool.append(entry)
        said = f"spooled to {spool.path} for the next run that can write"
    except OSError as exc:  # the state disk too: stderr is all that is left, so all of it
        said = (
            f"not spooled either ({spool.path}: {exc.strerror or exc}); in full: {entry.to_json()}"
        )
    print(f"dq: not recorded, {said}: {outcome.summary()}", file=sys.stderr, flush=True)
    if outcome.alerting:
        print(alert_line(outcome), file=sys.stderr, flush=True)
    return False


def replay_spool(
    settings: Settings, now: dt.datetime, record_entry: Callable[[Connection, SpoolEntry], object]
) -> int:
    """Record what an outage spooled, oldest first, each with its original window and time, by
    `record_entry` (the tick's recording, so the check's policy, inhibition and grouping apply as
    in a live run), before this run records anything; `now` stamps the replay. Idempotent: an
    entry id recorded in dq_spool_replays (same transaction) is never recorded twice, even after
    a crash between the commit and the spool's rewrite. Returns how many entries were recorded."""
    if not database_ready(settings):
        return 0
    spool = Spool(settings.spool_dir)
    if not spool.pending():
        return 0

    def record(entry: SpoolEntry) -> bool:
        try:
            if _recorded(settings.engine, entry.id):
                return True
            with settings.engine.begin() as connection:
                connection.execute(
                    spool_replays.insert().values(
                        entry_id=entry.id, check_name=entry.check, replayed_at=now
                    )
                )
                record_entry(connection, entry)
            if entry.window is not None:
                _remember(settings.engine, entry.check, entry.window[1])
        except sa.exc.IntegrityError:
            if _recorded(settings.engine, entry.id):
                return True  # a concurrent replay recorded it
            raise
        except sa.exc.SQLAlchemyError as exc:
            if not unavailable(exc):
                raise
            database_unavailable(settings, exc)
            return False
        return True

    return spool.drain(record)


def _recorded(engine: Engine, entry_id: str) -> bool:
    with engine.connect() as connection:
        found = connection.execute(
            sa.select(spool_replays.c.entry_id).where(spool_replays.c.entry_id == entry_id)
        ).first()
    return found is not None


def _remember(engine: Engine, check: str, end: dt.datetime) -> None:
    """The spooled window counts as run, so `--due` does not run it again."""
    known = last_window_ends(engine).get(check)
    if known is None or known < end:
        remember_window_ends(engine, [check], end)
