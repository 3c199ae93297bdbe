"""Project database unavailable (acceptance 4), with `dq run` (in this process, on its Spark
session; a real process where it is killed) and a real PostgreSQL server: a read-only database,
and one unreachable from the start. The outcome reaches stdout, stderr and the spool, the exit
code is 4; the next run that can write records the spooled outcome with its original window and
time, opens the incident and delivers. A run killed in the middle of a replay records nothing
twice."""

from __future__ import annotations

import datetime as dt
import json
import re
import signal
import socket
import subprocess
import sys
import threading
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

import pytest
import sqlalchemy as sa

from alerting import EscalationPolicy, handle_outcome
from alerting.tables import incidents, notifications, runs
from checkers import AlertLevel
from scheduling.cli.exits import EXIT_INFRA, EXIT_OK
from scheduling.outage import record_or_spool, replay_spool
from scheduling.schema import project_database
from scheduling.settings import Settings
from scheduling.spool import Spool
from scheduling.tables import spool_replays
from scheduling.tick.record import record_in, replayer
from tests.alerting.conftest import outcome
from tests.conftest import POSTGRES_URL
from tests.scheduling.outages import (
    alerts,
    dq,
    outage_env,
    read_only_then_writable,
    spooled,
)

SEVEN = dt.datetime(2026, 11, 22, 7, 0, tzinfo=dt.UTC)
WINDOW = ["2026-11-22T06:45:00+00:00", "2026-11-22T07:00:00+00:00"]


def record_or_spool_of(settings, o, policy, now) -> bool:
    """`record_or_spool` with the tick's recording of `o` (no inhibition rule, no source)."""

    def record(connection):
        return record_in(
            connection,
            settings,
            o,
            policy,
            now,
            window=None,
            links={},
            inhibit_rule=None,
            source=None,
        )

    return record_or_spool(settings, o, now, record=record)


@pytest.fixture
def env(tmp_path, spark) -> dict[str, str]:
    """The runs' environment; `dq` runs in this process, on the test session's Spark."""
    return outage_env(tmp_path)


@pytest.fixture
def fresh_database() -> Iterator[sa.URL]:
    """A uniquely named PostgreSQL database (others use the server too), dropped at the end."""
    admin = sa.create_engine(POSTGRES_URL, isolation_level="AUTOCOMMIT")
    name = f"dq_{uuid.uuid4().hex[:16]}"
    with admin.connect() as connection:
        connection.execute(sa.text(f"CREATE DATABASE {name}"))
    try:
        yield sa.make_url(POSTGRES_URL).set(database=name)
    finally:
        with admin.connect() as connection:
            connection.execute(sa.text(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
        admin.dispose()


def assert_outage_reported(run: subprocess.CompletedProcess[str], env: dict[str, str]) -> None:
    assert run.returncode == EXIT_INFRA, run.stderr
    # the console summary as usual
    assert re.search(r"FAILED \(level ERROR\) +cli_positive +1/2 failing", run.stdout)
    assert "the project database is unavailable" in run.stderr
    assert "[DQ] FAILED (level ERROR): cli_positive: 1 of 2 elements failing" in run.stderr
    spool = Path(env["DQ_STATE_DIR"]) / "spool" / "outcomes.jsonl"
    assert (
        f"not recorded, spooled to {spool} for the next run that can write: cli_labelled: passed"
        in run.stderr
    )
    lines = spooled(env)
    assert sorted(e["check"] for e in lines) == ["cli_labelled", "cli_positive"]
    assert all(e["window"] == WINDOW and e["now"] == SEVEN.isoformat() for e in lines)
    assert alerts(env) == []  # nothing delivered: no outbox to go through


def assert_replayed(
    run: subprocess.CompletedProcess[str], env: dict[str, str], url: sa.URL
) -> None:
    assert run.returncode == EXIT_OK, run.stderr
    assert spooled(env) == []
    engine = sa.create_engine(url)
    with engine.connect() as connection:
        recorded = connection.execute(
            sa.select(
                runs.c.check_name, runs.c.window_start, runs.c.window_end, runs.c.status
            ).order_by(runs.c.check_name)
        ).all()
        [incident] = connection.execute(sa.select(incidents)).mappings()
        sent = connection.execute(
            sa.select(notifications.c.receiver, notifications.c.status, notifications.c.created_at)
        ).all()
    engine.dispose()
    start, end = (dt.datetime.fromisoformat(w) for w in WINDOW)
    assert [tuple(r) for r in recorded] == [
        ("cli_labelled", start, end, "passed"),
        ("cli_positive", start, end, "failed"),
    ]
    assert incident["check_name"] == "cli_positive" and incident["opened_at"] == SEVEN
    assert sorted((r, s, c) for r, s, c in sent) == [
        ("console", "sent", SEVEN),
        ("file", "sent", SEVEN),
    ]
    [alert] = alerts(env)
    assert (
        alert["title"] == "[DQ] FAILED (level ERROR): cli_positive"
        and alert["created_at"] == SEVEN.isoformat()
    )


@pytest.mark.postgres
def test_read_only_database_spools_then_the_next_run_records_and_delivers(fresh_database, env):
    steps = read_only_then_writable(fresh_database, env)
    first = next(steps)
    assert_outage_reported(first, env)
    assert "ReadOnlySqlTransaction" in first.stderr and "[SQL" not in first.stderr

    second = next(steps)  # the database is writable again
    assert_replayed(second, env, fresh_database)


@contextmanager
def forwarding(port: int, to: tuple[str, int]) -> Iterator[None]:
    """A TCP relay on `port` to the real server: the database becomes reachable at its URL."""
    listener = socket.create_server(("127.0.0.1", port))

    def pipe(source: socket.socket, target: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                target.sendall(data)
        except OSError:
            pass
        finally:
            for end in (source, target):
                with suppress(OSError):
                    end.shutdown(socket.SHUT_RDWR)

    def accept() -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return
            upstream = socket.create_connection(to)
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=pipe, args=(a, b), daemon=True).start()

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield
    finally:
        listener.shutdown(socket.SHUT_RDWR)
        listener.close()
        thread.join(timeout=10)


@pytest.mark.postgres
def test_database_unreachable_from_the_start(fresh_database, env):
    with socket.socket() as probe:  # a port nothing listens on (yet)
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = fresh_database.set(port=port, password="s3cret-pw")  # trust auth ignores it
    first = dq(env, url, "run", "--due", "--at", "2026-11-22T07:00:00")
    assert_outage_reported(first, env)
    assert f"postgres:***@127.0.0.1:{port}" in first.stderr and "Connection refused" in first.stderr
    assert "s3cret-pw" not in first.stderr + first.stdout

    real = sa.make_url(POSTGRES_URL)
    with forwarding(port, (real.host or "127.0.0.1", real.port or 5432)):
        second = dq(env, url, "run", "--due", "--at", "2026-11-22T07:10:00")
        assert_replayed(second, env, url)


#: Each spooled entry a replay commits notifies the channel (its check's name): the test's own
#: trigger on the project database, which the product does not see.
NOTIFY_REPLAYED = """
CREATE FUNCTION dq_test_replayed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN PERFORM pg_notify('dq_test_replayed', NEW.check_name); RETURN NEW; END $$;
CREATE TRIGGER dq_test_replayed AFTER INSERT ON dq_spool_replays
FOR EACH ROW EXECUTE FUNCTION dq_test_replayed();
"""


@contextmanager
def replay_commits(url: sa.URL) -> Iterator[Callable[[], str | None]]:
    """Listens to the replays committed in `url`'s database; yields a function that blocks
    until the next commit and returns its check (None after 120 s without one)."""
    import psycopg

    conninfo = url.set(drivername="postgresql").render_as_string(hide_password=False)
    with psycopg.connect(conninfo, autocommit=True) as listener:
        listener.execute(NOTIFY_REPLAYED)
        listener.execute("LISTEN dq_test_replayed")

        def next_commit() -> str | None:
            for note in listener.notifies(timeout=120, stop_after=1):
                return note.payload
            return None

        yield next_commit


@pytest.mark.postgres
def test_a_run_killed_during_replay_records_nothing_twice(
    fresh_database, env, tmp_path, monkeypatch
):
    url = fresh_database.render_as_string(hide_password=False)
    engine = project_database(url)
    policy = EscalationPolicy(routes={"file": AlertLevel.WARNING})
    handle_outcome(engine, outcome(AlertLevel.ERROR, check="beta"), policy, SEVEN)
    down = sa.make_url(url).set(port=1)  # nothing listens on port 1
    for name in ("DQ_STATE_DIR", "DQ_CONFIG"):
        monkeypatch.setenv(name, env[name])
    settings = Settings.from_environment(database_url=down.render_as_string(hide_password=False))
    later = SEVEN + dt.timedelta(minutes=15)
    for check in ("alpha", "beta"):
        assert not record_or_spool_of(
            settings, outcome(AlertLevel.ERROR, check=check), policy, later
        )
    assert [e["check"] for e in spooled(env)] == ["alpha", "beta"]

    holder = engine.connect()  # beta's open incident is locked: its replay blocks mid-way
    blocker = holder.begin()
    holder.execute(sa.select(incidents).where(incidents.c.check_name == "beta").with_for_update())
    with replay_commits(fresh_database) as next_commit:
        replaying = subprocess.Popen(
            [sys.executable, "-m", "scheduling.cli", "run", "--due", "--at", "2026-11-22T07:20:00"],
            env={**env, "DQ_DATABASE_URL": url},
            cwd=tmp_path,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        committed = next_commit()  # from here on, the replay can go no further than beta's lock
        replaying.send_signal(signal.SIGKILL)  # alpha is committed, the spool not yet rewritten
        assert committed == "alpha", replaying.communicate()
    replaying.wait()
    blocker.rollback()
    holder.close()
    assert [e["check"] for e in spooled(env)] == ["alpha", "beta"]

    again = dq(env, fresh_database, "run", "--due", "--at", "2026-11-22T07:20:00")  # none due
    assert again.returncode == EXIT_OK, again.stderr
    assert spooled(env) == []
    with engine.connect() as connection:
        counted = dict(
            connection.execute(
                sa.select(runs.c.check_name, sa.func.count()).group_by(runs.c.check_name)
            ).all()
        )
        replayed = connection.execute(
            sa.select(sa.func.count()).select_from(spool_replays)
        ).scalar()
    assert counted == {"alpha": 1, "beta": 2}  # beta: its first run and the replayed one
    assert replayed == 2
    assert sorted(a["title"] for a in alerts(env)) == [
        "[DQ] FAILED (level ERROR): alpha",
        "[DQ] FAILED (level ERROR): beta",
    ]
    engine.dispose()


def test_a_line_that_cannot_be_recorded_is_set_aside(tmp_path, monkeypatch, caplog):
    monkeypatch.setenv("DQ_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("DQ_CONFIG", str(tmp_path / "none.toml"))
    settings = Settings.from_environment(database_url=f"sqlite:///{tmp_path / 'dq.db'}")
    settings.database_error = "pretend it was down"  # the run spools from here on
    policy = settings.default_policy
    record_or_spool_of(settings, outcome(AlertLevel.ERROR, check="alpha"), policy, SEVEN)
    spool = Spool(settings.spool_dir)
    with spool.path.open("a") as out:
        out.write('{"torn": ')  # a crash in the middle of an append
    record_or_spool_of(settings, outcome(AlertLevel.ERROR, check="beta"), policy, SEVEN)
    assert replay_spool(settings, SEVEN, replayer(settings, lambda _: policy, [])) == 2
    assert settings.database_error is None and not spool.pending()
    [rejected] = spool.rejected.read_text().splitlines()
    assert json.loads(rejected)["line"] == '{"torn": '
    with settings.engine.connect() as connection:
        assert connection.execute(sa.select(sa.func.count()).select_from(runs)).scalar() == 2


def test_commands_that_need_the_database_say_so_with_exit_code_4(tmp_path, monkeypatch, capsys):
    from scheduling.cli import main

    monkeypatch.setenv("DQ_DATABASE_URL", "postgresql+psycopg://dq:hunter2@127.0.0.1:1/dq")
    monkeypatch.setenv("DQ_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("DQ_CONFIG", str(tmp_path / "none.toml"))
    assert main(["silence", "list"]) == EXIT_INFRA
    assert main(["history"]) == EXIT_INFRA
    err = capsys.readouterr().err
    assert "dq silence: needs the project database (postgresql+psycopg://dq:***@127.0.0.1:1" in err
    assert "dq history: needs the project database" in err and "hunter2" not in err


@pytest.mark.parametrize("driver", ["postgresql+psycopg", "mysql+pymysql"])
def test_a_silent_project_database_is_an_outage_not_a_hang(driver, tmp_path, monkeypatch):
    """A server that accepts the connection and never answers: without the project database's own
    timeouts the run would wait forever (PyMySQL has no read timeout by default); with them the
    run knows the database is unavailable and spools."""
    from checkers.project_db import engine
    from tests.checkers.slow_sources import silent_listener

    monkeypatch.setattr(engine, "PROJECT_CONNECT_TIMEOUT_S", 1)
    monkeypatch.setattr(engine, "PROJECT_READ_TIMEOUT_S", 1)
    monkeypatch.setenv("DQ_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("DQ_CONFIG", str(tmp_path / "none.toml"))
    with silent_listener() as (port, accepted):
        settings = Settings.from_environment(
            database_url=f"{driver}://dq:hunter2@127.0.0.1:{port}/dq"
        )
        assert accepted  # the server took the connection: the timeout, not a refusal, ended it
    assert settings.database_error is not None and "hunter2" not in settings.database_error
    assert not record_or_spool_of(
        settings, outcome(AlertLevel.ERROR), settings.default_policy, SEVEN
    )
    assert [e.check for e in Spool(settings.spool_dir).entries()] == ["orders_have_customers"]
