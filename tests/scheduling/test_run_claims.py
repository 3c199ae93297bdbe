"""`dq run --due` with window claims, in-process on a real SQLite database: windows another run
holds are skipped and left to it, done ones are skipped and remembered, an abandoned one is taken
over; `dq run NAME` (no window) is not claimed; an Airflow retry of a recorded window reports
that outcome; a run whose claim was taken over does not record."""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import sqlalchemy as sa

from alerting.pipeline import insert_run
from alerting.policy import EscalationPolicy
from alerting.tables import runs
from checkers import CheckOutcome, Status
from checkers.project_db import as_utc, utc_now
from scheduling.claims import Claim, ClaimState, claim, hold_windows, mark_done
from scheduling.cli import main
from scheduling.cli.exits import EXIT_FAILED, EXIT_OK
from scheduling.runner import run_window
from scheduling.schema import project_database
from scheduling.settings import Settings
from scheduling.tables import claims
from scheduling.tick.record import Recording, record, record_all
from scheduling.windows import last_window_ends
from tests.scheduling.cli_fixture_checks import CliDaily, CliLabelled, CliPositive

UTC = dt.UTC
START = dt.datetime(2026, 11, 22, 6, 45, tzinfo=UTC)  # a first run looks back one tick
SEVEN = dt.datetime(2026, 11, 22, 7, 0, tzinfo=UTC)
OTHER = "otherhost:4242:token"
HOUR = dt.timedelta(hours=1)


@pytest.fixture
def engine(tmp_path, monkeypatch):
    csv = tmp_path / "numbers.csv"
    csv.write_text("n,label\n1,a\n-2,\n")  # cli_positive and cli_labelled both fail
    monkeypatch.setenv("DQ_CLI_CSV", str(csv))
    monkeypatch.setenv("DQ_CHECKS", "tests.scheduling.cli_fixture_checks")
    monkeypatch.setenv("DQ_DATABASE_URL", f"sqlite:///{tmp_path / 'dq.db'}")
    monkeypatch.setenv("DQ_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("DQ_CONFIG", str(tmp_path / "none.toml"))
    engine = project_database()
    yield engine
    engine.dispose()


def _runs(engine) -> list[tuple]:
    with engine.connect() as connection:
        rows = connection.execute(
            sa.select(runs.c.id, runs.c.check_name, runs.c.window_end).order_by(runs.c.id)
        )
        return [(i, name, end and end.replace(tzinfo=UTC)) for i, name, end in rows]


def test_due_windows_claimed_elsewhere_are_skipped_then_taken_over(spark, engine, capsys):
    positive = claim(
        engine, "cli_positive", (START, SEVEN), holder=OTHER, lease=HOUR, now=utc_now()
    )
    claim(engine, "cli_labelled", (START, SEVEN), holder=OTHER, lease=HOUR, now=utc_now())

    assert main(["run", "--due", "--at", "2026-11-22T07:00:00"]) == EXIT_OK  # skips: no outcome
    out = capsys.readouterr().out
    assert (
        "cli_positive: skipped, window (2026-11-22T06:45:00+00:00, 2026-11-22T07:00:00+00:00]"
        " already claimed by otherhost:4242" in out
    )
    assert "cli_labelled: skipped" in out
    # not a green run: it says it evaluated nothing, and why
    assert out.rstrip().endswith("nothing ran: 2 window(s) held by another run, 0 done; exit 0")
    assert _runs(engine) == []
    # the live holder remembers its windows when it finishes; only the other check moved on
    assert last_window_ends(engine) == {"cli_daily": SEVEN}

    with engine.begin() as connection:  # the other run records cli_positive, then dies
        assert mark_done(connection, positive, holder=OTHER, now=utc_now())
        connection.execute(
            claims.update()
            .where(claims.c.check_name == "cli_labelled")
            .values(lease_until=utc_now() - dt.timedelta(seconds=1))
        )

    later = SEVEN + dt.timedelta(seconds=5)
    assert main(["run", "--due", "--at", later.isoformat()]) == EXIT_FAILED
    out = capsys.readouterr().out
    assert (
        "cli_positive: skipped, window (2026-11-22T06:45:00+00:00, 2026-11-22T07:00:00+00:00]"
        " already done by otherhost:4242" in out
    )
    assert re.search(r"FAILED \(level ERROR\) +cli_labelled +1/2 failing", out)
    [(run_id, name, end)] = _runs(engine)
    assert (name, end) == ("cli_labelled", later)
    with engine.connect() as connection:
        done = connection.execute(
            sa.select(
                claims.c.status, claims.c.run_id, claims.c.outcome_status, claims.c.holder
            ).where(claims.c.check_name == "cli_labelled")
        ).one()
    assert done[:3] == ("done", run_id, "failed") and not done.holder.startswith("otherhost")
    # the done window's end is remembered, so the next tick starts after it
    assert last_window_ends(engine) == {
        "cli_daily": later,
        "cli_positive": SEVEN,
        "cli_labelled": later,
    }

    assert main(["run", "cli_positive", "--at", "2026-11-22T07:00:00"]) == EXIT_FAILED
    manual = capsys.readouterr().out  # a manual run is not claimed
    assert re.search(r"FAILED \(level ERROR\) +cli_positive ", manual)
    assert [name for _, name, _ in _runs(engine)] == ["cli_labelled", "cli_positive"]
    again = claim(engine, "cli_positive", (START, SEVEN), holder="x:1:t", lease=HOUR, now=utc_now())
    assert again.state is ClaimState.DONE


def test_airflow_retry_returns_the_recorded_outcome_and_fails_beside_a_live_task(engine):
    six = dt.datetime(2026, 11, 22, 6, 0, tzinfo=UTC)
    window = (six - dt.timedelta(minutes=15), six)  # the DAG run's data interval
    held = claim(engine, "cli_daily", window, holder=OTHER, lease=HOUR, now=utc_now())
    live = run_window(["cli_daily"], start=window[0], end=window[1]).results["cli_daily"]
    assert isinstance(live, Claim)  # the first try still runs: its claim, nothing evaluated
    assert "already claimed by otherhost:4242" in live.describe()

    earlier = CheckOutcome(check="cli_daily", status=Status.PASSED, total=3)
    with engine.begin() as connection:  # the first try recorded its outcome, then failed
        run_id = insert_run(connection, earlier, window)
        assert mark_done(connection, held, holder=OTHER, now=utc_now(), run_id=run_id)
    again = run_window(["cli_daily"], start=window[0], end=window[1]).results
    assert again == {"cli_daily": earlier}
    assert len(_runs(engine)) == 1  # nothing evaluated again


def test_a_holder_that_died_is_not_named_as_a_live_run(engine, capsys):
    """A rerun right after a crash: the dead run's lease still holds the windows. The run says
    it evaluated nothing (`nothing_ran` for a wrapper) and that the holder is gone."""
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    holder = f"{socket.gethostname()}:{dead.pid}:crashed"
    for check in ("cli_positive", "cli_labelled"):
        claim(engine, check, (START, SEVEN), holder=holder, lease=HOUR, now=utc_now())
    assert main(["run", "--due", "--json", "--at", "2026-11-22T07:00:00"]) == EXIT_OK
    document = json.loads(capsys.readouterr().out)
    assert document["outcomes"] == []
    assert document["nothing_ran"] == "2 window(s) held by another run, 0 done"
    [claimed] = [c for c in hold_windows(engine, [("cli_positive", START, SEVEN)]).skipped.values()]
    assert f"already claimed by {socket.gethostname()}:{dead.pid}, which is no longer running" in (
        claimed.describe()
    )


def test_a_run_whose_claim_was_taken_over_does_not_record(engine):
    settings = Settings(engine, {}, EscalationPolicy(routes={}))
    mine = hold_windows(engine, [("cli_daily", START, SEVEN)], holder="me:1:t", lease=HOUR)
    with engine.begin() as connection:  # this run stalled past its lease ...
        connection.execute(claims.update().values(lease_until=utc_now() - dt.timedelta(seconds=1)))
    other = claim(engine, "cli_daily", (START, SEVEN), holder=OTHER, lease=HOUR, now=utc_now())
    assert other.state is ClaimState.CLAIMED  # ... and another run took the window over
    outcome = CheckOutcome(check="cli_daily", status=Status.PASSED, total=3)
    lost = record(settings, mine, Recording(CliDaily, outcome, window=(START, SEVEN)), SEVEN)
    assert isinstance(lost, Claim) and lost.holder == OTHER
    assert _runs(engine) == []  # the outcome is the new holder's to record


def test_a_batch_with_one_lost_claim_records_the_others(engine):
    """Outcomes are recorded many to a transaction; one window taken over by another run rolls
    its batch back, and each outcome is recorded again on its own: the lost one is skipped."""
    settings = Settings(engine, {}, EscalationPolicy(routes={}))
    checks = [CliDaily, CliPositive, CliLabelled]
    windows = [(c.name, START, SEVEN) for c in checks]
    mine = hold_windows(engine, windows, holder="me:1:t", lease=HOUR)
    with engine.begin() as connection:  # cli_positive's lease ran out and another run took it
        connection.execute(
            claims.update()
            .where(claims.c.check_name == "cli_positive")
            .values(lease_until=utc_now() - dt.timedelta(seconds=1))
        )
    claim(engine, "cli_positive", (START, SEVEN), holder=OTHER, lease=HOUR, now=utc_now())
    recordings = [
        Recording(
            c, CheckOutcome(check=c.name, status=Status.PASSED, total=3), window=(START, SEVEN)
        )
        for c in checks
    ]
    answers = record_all(settings, mine, recordings, SEVEN)
    assert answers[0] is True and answers[2] is True
    assert isinstance(answers[1], Claim) and answers[1].holder == OTHER
    assert sorted(name for _, name, _ in _runs(engine)) == ["cli_daily", "cli_labelled"]


def test_an_airflow_retry_evaluates_an_errored_window_again(spark, engine):
    from scheduling.runner import run_window

    six = dt.datetime(2026, 11, 22, 6, 0, tzinfo=UTC)
    window = (six - dt.timedelta(minutes=15), six)
    first = claim(engine, "cli_daily", window, holder=OTHER, lease=HOUR, now=utc_now())
    outage = CheckOutcome(check="cli_daily", status=Status.ERROR, error="source unreachable")
    with engine.begin() as connection:  # the first try: the source was down
        run_id = insert_run(connection, outage, window)
        mark_done(
            connection, first, holder=OTHER, now=utc_now(), run_id=run_id, outcome_status="error"
        )
    again = run_window(["cli_daily"], start=window[0], end=window[1]).results
    assert again == {"cli_daily": outage}  # a plain retry reports what was recorded
    retried = run_window(["cli_daily"], start=window[0], end=window[1], retry_errors=True).results
    assert retried["cli_daily"].status is Status.PASSED  # the source is back: evaluated again
    assert [name for _, name, _ in _runs(engine)] == ["cli_daily", "cli_daily"]
    done = claim(engine, "cli_daily", window, holder="x:1:t", lease=HOUR, now=utc_now())
    assert (done.state, done.outcome_status) == (ClaimState.DONE, "passed")
    # a window done with a real outcome is never evaluated twice, retry or not
    again = run_window(["cli_daily"], start=window[0], end=window[1], retry_errors=True)
    assert again.results == retried
    assert len(_runs(engine)) == 2


def test_a_run_killed_inside_a_batch_loses_only_that_batch_and_the_next_run_records_it_once(
    tmp_path,
):
    """SIGKILL after the 5th of 6 outcomes, 3 to a transaction: the first batch is recorded
    whole, nothing of the second (no run, incident or outbox row without its done claim); once
    the dead run's lease runs out, the next run takes the 3 windows over and records each once."""
    from alerting.tables import incidents, notifications
    from tests.polling import wait_for
    from tests.scheduling import batch_crasher as crasher

    url = f"sqlite:///{tmp_path / 'dq.db'}"
    engine = project_database(url)
    killed = subprocess.run(
        [sys.executable, "-m", "tests.scheduling.batch_crasher", url, "3", "5"],
        env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])},
        check=False,
    )
    assert killed.returncode == -signal.SIGKILL

    def counts() -> tuple[int, ...]:
        with engine.connect() as connection:
            return tuple(
                connection.execute(sa.select(sa.func.count()).select_from(t)).scalar_one()
                for t in (runs, incidents, notifications)
            )

    assert counts() == (3, 3, 3)
    with engine.connect() as connection:
        status = dict(connection.execute(sa.select(claims.c.check_name, claims.c.status)).all())
    assert status == {name: "done" if i < 3 else "running" for i, name in enumerate(crasher.CHECKS)}

    with engine.connect() as connection:
        lease_ends = connection.execute(sa.select(sa.func.max(claims.c.lease_until))).scalar_one()
    # the dead run claimed its windows one batch at a time: take over once every lease has run
    # out (a take-over between two expiries would hold some windows for an hour, and wait forever)
    wait_for(lambda: utc_now() > as_utc(lease_ends), "the dead run's leases to run out")
    held = hold_windows(engine, [(name, *crasher.WINDOW) for name in crasher.CHECKS], lease=HOUR)
    assert sorted(held.held) == crasher.CHECKS[3:]
    assert sorted(held.skipped) == crasher.CHECKS[:3]  # done: never recorded twice
    settings = Settings(engine, {}, crasher.POLICY)
    left = [r for r in crasher.recordings() if r.subject.name in held.held]
    assert record_all(settings, held, left, crasher.END) == [True] * 3
    assert counts() == (6, 6, 6)
    engine.dispose()
