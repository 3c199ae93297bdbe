"""Window claims on SQLite, PostgreSQL and MariaDB, each test in a fresh database: claim, held,
takeover after an expired lease, done; concurrent claimers; a heartbeat keeping a live holder's
claim and a SIGKILLed holder's lease running out (real processes)."""

from __future__ import annotations

import datetime as dt
import os
import signal
import subprocess
import sys
import threading
from collections import Counter
from pathlib import Path

import pytest
import sqlalchemy as sa

from checkers.project_db import utc_now
from scheduling.claims import ClaimState, claim, hold_windows, mark_done, reopen_errored
from scheduling.schema import project_database
from scheduling.tables import claims
from tests.polling import wait_for, wait_for_line
from tests.scheduling.databases import KINDS, fresh_database

START = dt.datetime(2026, 11, 22, 6, 45, 0, 123456, tzinfo=dt.UTC)  # microseconds key claims
END = dt.datetime(2026, 11, 22, 7, 0, tzinfo=dt.UTC)
REAL = dt.datetime(2030, 1, 1, 12, 0, tzinfo=dt.UTC)  # the lease clock, apart from the windows
LEASE = dt.timedelta(seconds=60)


@pytest.fixture(params=KINDS)
def engine(request, tmp_path):
    with fresh_database(request.param, tmp_path) as url:
        engine = project_database(url)
        yield engine
        engine.dispose()


def test_claim_held_takeover_and_done(engine):
    first = claim(engine, "orders", (START, END), holder="a:1:x", lease=LEASE, now=REAL)
    assert first.state is ClaimState.CLAIMED

    later_end = END + dt.timedelta(seconds=2)  # a concurrent run a little later: same start
    held = claim(engine, "orders", (START, later_end), holder="b:2:y", lease=LEASE, now=REAL)
    assert (held.state, held.holder, held.end) == (ClaimState.HELD, "a:1:x", END)
    assert held.describe() == (
        "orders: skipped, window (2026-11-22T06:45:00.123456+00:00, 2026-11-22T07:00:00+00:00]"
        f" already claimed by a:1 (its lease runs to {REAL + LEASE:%H:%M:%S} UTC)"
    )

    expired = REAL + LEASE + dt.timedelta(seconds=1)  # a:1 died: its lease ran out
    taken = claim(engine, "orders", (START, later_end), holder="b:2:y", lease=LEASE, now=expired)
    assert (taken.state, taken.taken_over_from, taken.end) == (
        ClaimState.CLAIMED,
        "a:1:x",
        later_end,
    )
    with engine.begin() as connection:  # the old holder wakes up: it may no longer record
        assert not mark_done(connection, first, holder="a:1:x", now=expired)
        assert mark_done(connection, taken, holder="b:2:y", now=expired, run_id=7)

    long_after = expired + 10 * LEASE
    done = claim(engine, "orders", (START, END), holder="c:3:z", lease=LEASE, now=long_after)
    assert (done.state, done.holder, done.run_id) == (ClaimState.DONE, "b:2:y", 7)
    assert done.describe().endswith("already done by b:2")

    other_start = START + dt.timedelta(microseconds=1)  # another window, another claim
    fresh = claim(engine, "orders", (other_start, END), holder="c:3:z", lease=LEASE, now=REAL)
    assert fresh.state is ClaimState.CLAIMED
    with engine.connect() as connection:
        starts = connection.execute(sa.select(claims.c.window_start)).scalars().all()
    assert len(starts) == 2


def _together(count: int, attempt) -> list:
    """Run `attempt(i)` in `count` threads released at the same moment."""
    barrier = threading.Barrier(count)
    results: list = [None] * count

    def run(i: int) -> None:
        barrier.wait()
        results[i] = attempt(i)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


def test_concurrent_claimers_exactly_one_wins(engine):
    answers = _together(
        6,
        lambda i: claim(
            engine,
            "orders",
            (START, END + dt.timedelta(seconds=i)),
            holder=f"h:{i}:t",
            lease=LEASE,
            now=REAL,
        ),
    )
    states = Counter(a.state for a in answers)
    assert states == {ClaimState.CLAIMED: 1, ClaimState.HELD: 5}
    [winner] = [a.holder for a in answers if a.state is ClaimState.CLAIMED]
    assert {a.holder for a in answers if a.state is ClaimState.HELD} == {winner}

    expired = REAL + 2 * LEASE  # the winner died; six runs race to take its window over
    takeovers = _together(
        6,
        lambda i: claim(
            engine, "orders", (START, END), holder=f"n:{i}:t", lease=LEASE, now=expired
        ),
    )
    assert Counter(a.state for a in takeovers) == {ClaimState.CLAIMED: 1, ClaimState.HELD: 5}
    [taker] = [a for a in takeovers if a.state is ClaimState.CLAIMED]
    assert taker.taken_over_from == winner


def test_concurrent_retries_of_an_errored_window_evaluate_it_once(engine):
    first = claim(engine, "orders", (START, END), holder="h:1:t", lease=LEASE, now=REAL)
    with engine.begin() as connection:  # its source was down: an ERROR outcome
        mark_done(connection, first, holder="h:1:t", now=REAL, run_id=7, outcome_status="error")
    done = claim(engine, "orders", (START, END), holder="x:1:t", lease=LEASE, now=REAL)
    retries = _together(
        6,
        lambda i: reopen_errored(engine, done, holder=f"r:{i}:t", lease=LEASE, now=REAL),
    )
    assert Counter(a.state for a in retries) == {ClaimState.CLAIMED: 1, ClaimState.HELD: 5}
    passed = claim(engine, "orders", (START, END), holder="x:2:t", lease=LEASE, now=REAL)
    assert passed.state is ClaimState.HELD  # the winner evaluates it again
    with engine.begin() as connection:
        [winner] = [a for a in retries if a.state is ClaimState.CLAIMED]
        mark_done(
            connection, winner, holder=winner.holder, now=REAL, run_id=8, outcome_status="passed"
        )
    again = claim(engine, "orders", (START, END), holder="x:3:t", lease=LEASE, now=REAL)
    assert reopen_errored(engine, again, holder="x:3:t", lease=LEASE, now=REAL).state is (
        ClaimState.DONE
    )  # a real outcome is never evaluated twice


def test_a_failed_run_releases_its_claims_for_the_next_run(engine):
    held = hold_windows(engine, [("orders", START, END)], holder="a:1:x", lease=LEASE)
    with pytest.raises(RuntimeError), held:
        raise RuntimeError("evaluation crashed")
    retry = claim(engine, "orders", (START, END), holder="b:2:y", lease=LEASE, now=utc_now())
    assert (retry.state, retry.taken_over_from) == (ClaimState.CLAIMED, "a:1:x")


def _lease_until(url: str) -> dt.datetime:
    engine = sa.create_engine(url)
    try:
        with engine.connect() as connection:
            value = connection.execute(sa.select(claims.c.lease_until)).scalar_one()
    finally:
        engine.dispose()
    return value if value.tzinfo else value.replace(tzinfo=dt.UTC)


@pytest.mark.parametrize("kind", KINDS[:2])  # processes and leases; the SQL is tested on all
def test_heartbeat_keeps_a_live_holder_and_a_killed_holders_lease_expires(kind, tmp_path):
    lease = dt.timedelta(seconds=1.5)
    with fresh_database(kind, tmp_path) as url:
        engine = project_database(url)
        holder = subprocess.Popen(
            [sys.executable, "-m", "tests.scheduling.claim_holder", url, "1.5"],
            env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])},
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        try:
            assert holder.stdout is not None
            wait_for_line(holder.stdout, "the holder to claim", timeout=60)
            first = _lease_until(url)
            # past the first lease: the heartbeat has renewed it, so the window is still held
            wait_for(lambda: utc_now() > first + dt.timedelta(seconds=0.5), "the first lease")
            assert _lease_until(url) > first
            live = claim(engine, "orders", (START, END), holder="b:2:y", lease=lease, now=utc_now())
            assert live.state is ClaimState.HELD
            holder.send_signal(signal.SIGKILL)
            holder.wait()

            def takeover():
                c = claim(
                    engine, "orders", (START, END), holder="b:2:y", lease=lease, now=utc_now()
                )
                return c if c.state is ClaimState.CLAIMED else None

            taken = wait_for(takeover, "the dead holder's lease to expire")
            assert taken.taken_over_from == live.holder
        finally:
            holder.kill()
            holder.wait()
            engine.dispose()
