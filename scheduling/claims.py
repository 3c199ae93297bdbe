"""Exclusive windows: a (check, window) is claimed in the project database before it is evaluated,
with a lease its holder renews while it runs, so concurrent runs evaluate each window once and a
dead holder's window is taken over when its lease expires. Lease times are real time."""

from __future__ import annotations

import datetime as dt
import logging
import os
import socket
import threading
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

from alerting.tables import runs
from checkers.outcome import CheckOutcome
from checkers.project_db import as_utc, utc_now
from scheduling.tables import claims

log = logging.getLogger(__name__)
DEFAULT_LEASE = dt.timedelta(seconds=60)

Clock = Callable[[], dt.datetime]


class ClaimState(StrEnum):
    CLAIMED = "claimed"  # ours now (new, or taken over from a holder whose lease expired)
    DONE = "done"  # already evaluated and recorded
    HELD = "held"  # a live holder is evaluating it


@dataclass(frozen=True)
class Claim:
    """The answer to a claim: the state, and the claim row as it stands."""

    state: ClaimState
    check: str
    start: dt.datetime
    end: dt.datetime  # the window end of the claim row (the holder's)
    holder: str
    run_id: int | None = None
    taken_over_from: str | None = None
    outcome_status: str | None = None  # of a done claim: passed, failed, error...
    lease_until: dt.datetime | None = None  # of a held claim (the database's time)

    def describe(self) -> str:
        window = f"({self.start.isoformat()}, {self.end.isoformat()}]"
        who = holder_name(self.holder)
        if self.state is ClaimState.DONE:
            return f"{self.check}: skipped, window {window} already done by {who}"
        text = f"{self.check}: skipped, window {window} already claimed by {who}"
        until = f"{self.lease_until:%H:%M:%S} UTC" if self.lease_until else "its lease ends"
        if holder_alive(self.holder) is False:  # a dead process must not look like a live run
            return f"{text}, which is no longer running: the window is free after {until}"
        return text if self.lease_until is None else f"{text} (its lease runs to {until})"


def new_holder() -> str:
    """host:pid:token; the token tells apart runs of one process."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:12]}"


def holder_alive(holder: str) -> bool | None:
    """Whether the holder's process runs: None when it runs on another host (unknowable here)."""
    host, _, rest = holder.partition(":")
    pid = rest.split(":", 1)[0]
    if host != socket.gethostname() or not pid.isdigit():
        return None
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's live process
        return True
    return True


def holder_name(holder: str) -> str:
    """host:pid, for people."""
    return holder.rsplit(":", 1)[0]


def lease_of(value: str | None) -> dt.timedelta:
    """A claim's lease from its setting (DQ_CLAIM_LEASE_SECONDS; None: the default)."""
    if not value:
        return DEFAULT_LEASE
    seconds = float(value)
    if not seconds > 0:
        raise ValueError(
            f"DQ_CLAIM_LEASE_SECONDS must be a positive number of seconds, got {value!r}"
        )
    return dt.timedelta(seconds=seconds)


def _key(check: str, start: dt.datetime) -> sa.ColumnElement[bool]:
    return sa.and_(claims.c.check_name == check, claims.c.window_start == start)


def claim(
    engine: Engine,
    check: str,
    window: tuple[dt.datetime, dt.datetime],
    *,
    holder: str,
    lease: dt.timedelta,
    now: dt.datetime,
) -> Claim:
    """Claim `check`'s window (start, end] for `holder` until `now + lease` (real time). A claim
    whose holder's lease expired while still running is taken over; a done one stays done."""
    start, end = window
    row = {"window_end": end, "holder": holder, "claimed_at": now, "lease_until": now + lease}
    try:
        with engine.begin() as connection:
            connection.execute(
                claims.insert().values(
                    check_name=check, window_start=start, status="running", **row
                )
            )
        return Claim(ClaimState.CLAIMED, check, start, end, holder)
    except sa.exc.IntegrityError:
        pass  # claimed before: done, held, or abandoned
    with engine.begin() as connection:
        existing = connection.execute(sa.select(claims).where(_key(check, start))).mappings().one()
        found = _claim_of(existing)
        lease_until = as_utc(existing["lease_until"])
        if found.state is ClaimState.DONE or (lease_until is not None and lease_until >= now):
            return found
        # compare-and-swap: only one of several claimers replaces the expired holder
        swapped = connection.execute(
            claims.update()
            .where(
                _key(check, start),
                claims.c.holder == found.holder,
                claims.c.status == "running",
                claims.c.lease_until < now,
            )
            .values(**row)
        ).rowcount
    if swapped == 1:
        log.warning(
            "%s: took over window from %s, whose lease expired", check, holder_name(found.holder)
        )
        return Claim(ClaimState.CLAIMED, check, start, end, holder, taken_over_from=found.holder)
    return current_claim(engine, check, start)  # another claimer swapped first


#: Windows claimed per transaction when none of them has a claim yet (the common case): one
#: commit for many instead of one each.
CLAIM_BATCH = 500


def _claim_unclaimed(
    engine: Engine,
    windows: Sequence[tuple[str, dt.datetime, dt.datetime]],
    holder: str,
    lease: dt.timedelta,
    now: dt.datetime,
) -> dict[tuple[str, dt.datetime], Claim]:
    """Claim in one transaction (one multi-row insert) each of `windows` that has no claim row;
    the others are left to `claim`, one by one. When another claimer inserts one of them first,
    the unique key refuses the insert and this claims none (each is then claimed alone)."""
    names = sorted({check for check, _, _ in windows})
    starts = sorted({start for _, start, _ in windows})
    try:
        with engine.begin() as connection:
            new = _unclaimed(connection, windows, names, starts)
            if new:
                connection.execute(claims.insert(), _claim_rows(new, holder, lease, now))
    except sa.exc.IntegrityError:
        return {}
    return {(c, s): Claim(ClaimState.CLAIMED, c, s, e, holder) for c, s, e in new}


def _unclaimed(
    connection: Connection,
    windows: Sequence[tuple[str, dt.datetime, dt.datetime]],
    names: list[str],
    starts: list[dt.datetime],
) -> list[tuple[str, dt.datetime, dt.datetime]]:
    known = {
        (check, as_utc(start))
        for check, start in connection.execute(
            sa.select(claims.c.check_name, claims.c.window_start).where(
                claims.c.check_name.in_(names), claims.c.window_start.in_(starts)
            )
        )
    }
    return [(check, start, end) for check, start, end in windows if (check, start) not in known]


def _claim_rows(
    windows: Sequence[tuple[str, dt.datetime, dt.datetime]],
    holder: str,
    lease: dt.timedelta,
    now: dt.datetime,
) -> list[dict[str, object]]:
    return [
        {
            "check_name": check,
            "window_start": start,
            "window_end": end,
            "status": "running",
            "holder": holder,
            "claimed_at": now,
            "lease_until": now + lease,
        }
        for check, start, end in windows
    ]


def _claim_of(row: sa.RowMapping) -> Claim:
    state = ClaimState.DONE if row["status"] == "done" else ClaimState.HELD
    return Claim(
        state,
        row["check_name"],
        as_utc(row["window_start"]),
        as_utc(row["window_end"]),
        row["holder"],
        row["run_id"],
        outcome_status=row["outcome_status"],
        lease_until=as_utc(row["lease_until"]) if state is ClaimState.HELD else None,
    )


def reopen_errored(
    engine: Engine, done: Claim, *, holder: str, lease: dt.timedelta, now: dt.datetime
) -> Claim:
    """Claim again a window whose recorded outcome is ERROR (an Airflow retry evaluates it once
    more: the source may be back). Compare-and-swap, so one of several retries wins."""
    with engine.begin() as connection:
        swapped = connection.execute(
            claims.update()
            .where(
                _key(done.check, done.start),
                claims.c.status == "done",
                claims.c.outcome_status == "error",
                claims.c.run_id == done.run_id,
            )
            .values(
                status="running",
                holder=holder,
                claimed_at=now,
                lease_until=now + lease,
                finished_at=None,
            )
        ).rowcount
    if swapped == 1:
        return Claim(ClaimState.CLAIMED, done.check, done.start, done.end, holder)
    return current_claim(engine, done.check, done.start)


def renew(
    engine: Engine, held: Sequence[Claim], *, holder: str, lease: dt.timedelta, now: dt.datetime
) -> list[Claim]:
    """Extend the leases of `held` to `now + lease`; returns the claims no longer ours."""
    lost = []
    with engine.begin() as connection:
        for c in held:
            count = connection.execute(
                claims.update()
                .where(_key(c.check, c.start), claims.c.holder == holder)
                .values(lease_until=now + lease)
            ).rowcount
            if count != 1:
                lost.append(c)
    return lost


_MARK_DONE = claims.update().where(
    claims.c.check_name == sa.bindparam("b_check"),
    claims.c.window_start == sa.bindparam("b_start"),
    claims.c.holder == sa.bindparam("b_holder"),
    claims.c.status == "running",
)  # built once: a tick marks thousands of claims done


def mark_done(
    connection: Connection,
    held: Claim,
    *,
    holder: str,
    now: dt.datetime,
    run_id: int | None = None,
    outcome_status: str | None = None,
) -> bool:
    """In the transaction that records the window's outcome: the claim is done. False when it
    is no longer ours (our lease expired and another run took it over): do not record then."""
    count = connection.execute(
        _MARK_DONE,
        {
            "status": "done",
            "finished_at": now,
            "run_id": run_id,
            "outcome_status": outcome_status,
            "b_check": held.check,
            "b_start": held.start,
            "b_holder": holder,
        },
    ).rowcount
    return count == 1


def release(engine: Engine, held: Sequence[Claim], *, holder: str, now: dt.datetime) -> None:
    """Give up running claims at once (the run failed before recording them): the next run
    takes them over without waiting for the lease."""
    with engine.begin() as connection:
        for c in held:
            connection.execute(
                claims.update()
                .where(_key(c.check, c.start), claims.c.holder == holder)
                .where(claims.c.status == "running")
                .values(lease_until=now)
            )


def recorded_outcome(engine: Engine, run_id: int | None) -> CheckOutcome | None:
    """The outcome a done claim recorded."""
    if run_id is None:
        return None
    with engine.connect() as connection:
        text = connection.execute(sa.select(runs.c.outcome).where(runs.c.id == run_id)).scalar()
    return CheckOutcome.from_json(text) if text else None


def current_claim(engine: Engine, check: str, start: dt.datetime) -> Claim:
    with engine.connect() as connection:
        row = connection.execute(sa.select(claims).where(_key(check, start))).mappings().one()
    return _claim_of(row)


class ClaimLost(RuntimeError):
    """Our lease expired and another run took the window over: its outcome is theirs to record."""


@dataclass
class HeldWindows:
    """The windows one run claimed, with a heartbeat renewing their leases every lease/3 while
    the run evaluates (`with held: ...`); the claims it could not get are in `skipped`."""

    engine: Engine
    holder: str
    lease: dt.timedelta
    clock: Clock = utc_now
    held: dict[str, Claim] = field(default_factory=dict)
    skipped: dict[str, Claim] = field(default_factory=dict)
    _stop: threading.Event = field(default_factory=threading.Event, init=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False)
    _thread: threading.Thread | None = field(default=None, init=False)

    def __enter__(self) -> HeldWindows:
        if self.held:
            self._thread = threading.Thread(
                target=self._heartbeat, name=f"dq-lease-{self.holder}", daemon=True
            )
            self._thread.start()
        return self

    def __exit__(self, kind: object, error: object, traceback: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        if kind is not None and self.held:
            try:
                release(self.engine, list(self.held.values()), holder=self.holder, now=self.clock())
            except sa.exc.SQLAlchemyError:
                log.exception("could not release the claims of %s", holder_name(self.holder))

    def _heartbeat(self) -> None:
        interval = self.lease.total_seconds() / 3
        while not self._stop.wait(interval):
            with self._lock:
                running = list(self.held.values())
            try:
                lost = renew(
                    self.engine, running, holder=self.holder, lease=self.lease, now=self.clock()
                )
            except sa.exc.SQLAlchemyError:  # the next beat tries again; the lease is 3 beats
                log.exception("could not renew the claims of %s", holder_name(self.holder))
                continue
            for c in lost:
                log.warning("%s: claim on its window lost (lease expired)", c.check)

    def done(self, connection: Connection, check: str, run_id: int, status: str) -> None:
        """Mark `check`'s claim done in the recording transaction; raises ClaimLost (rolling the
        recording back) when the claim is no longer ours. Unclaimed checks pass."""
        held = self.held.get(check)
        if held is None:
            return
        if not mark_done(
            connection,
            held,
            holder=self.holder,
            now=self.clock(),
            run_id=run_id,
            outcome_status=status,
        ):
            raise ClaimLost(f"{check}: window claim lost to another run")

    def finished(self, check: str) -> None:
        """Stop renewing `check`'s claim (it is done or lost)."""
        with self._lock:
            self.held.pop(check, None)


def hold_windows(
    engine: Engine,
    windows: Sequence[tuple[str, dt.datetime, dt.datetime]],
    *,
    holder: str | None = None,
    lease: dt.timedelta | None = None,
    clock: Clock = utc_now,
    retry_errors: bool = False,
) -> HeldWindows:
    """Claim each (check, start, end); those claimed by others (running or done) are skipped.
    With `retry_errors`, a window done with an ERROR outcome is claimed again."""
    result = HeldWindows(engine, holder or new_holder(), lease or DEFAULT_LEASE, clock)
    fresh: dict[tuple[str, dt.datetime], Claim] = {}
    for first in range(0, len(windows), CLAIM_BATCH):
        batch = windows[first : first + CLAIM_BATCH]
        fresh.update(_claim_unclaimed(engine, batch, result.holder, result.lease, clock()))
    for check, start, end in windows:
        answer = fresh.get((check, start)) or claim(
            engine, check, (start, end), holder=result.holder, lease=result.lease, now=clock()
        )
        if retry_errors and answer.state is ClaimState.DONE and answer.outcome_status == "error":
            answer = reopen_errored(
                engine, answer, holder=result.holder, lease=result.lease, now=clock()
            )
        if answer.state is ClaimState.CLAIMED:
            result.held[check] = answer
        else:
            result.skipped[check] = answer
    return result
