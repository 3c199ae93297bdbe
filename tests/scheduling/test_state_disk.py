"""The local disk or the SQLite file breaks under `dq run` (issue 28, acceptance 1 and 6): a full
or read-only state directory (a real 1 MiB tmpfs, mounted here because the tests run as root;
elsewhere a folder made read-only) loses no outcome: each is recorded and alerted without its
failing-rows link, the failure reported, exit 4. A corrupt SQLite file is an outage: exit 4,
outcomes on stderr and in the spool, and `dq doctor` says how to recover. With the spool unwritable
too, the outcomes are on stderr in full. Files dq creates are private whatever the umask."""

from __future__ import annotations

import gc
import json
import os
import stat
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import sqlalchemy as sa

from alerting.tables import incidents, notifications, runs
from checkers.project_db import database_engine
from scheduling.cli.doctor import database_finding, files_finding
from scheduling.cli.exits import EXIT_INFRA
from scheduling.config import Config
from tests.scheduling.outages import dq, outage_env, spooled

AT = "2026-11-22T07:00:00"


@contextmanager
def broken_disk(path: Path, *, full: bool) -> Iterator[str]:
    """`path` on a 1 MiB tmpfs, filled up or mounted read-only; without root, a read-only
    folder. Yields what was used."""
    path.mkdir(parents=True, exist_ok=True)
    if os.geteuid() != 0:
        path.chmod(0o500)
        try:
            yield "read-only folder"
        finally:
            path.chmod(0o700)
        return
    options = "size=1m" + ("" if full else ",ro")
    subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(path)], check=True)
    try:
        if full:
            with (path / "filler").open("wb") as filler, pytest.raises(OSError):
                while True:
                    filler.write(b"\0" * 65536)
                    filler.flush()
                    os.fsync(filler.fileno())
        yield "full tmpfs" if full else "read-only tmpfs"
    finally:
        subprocess.run(["umount", "-l", str(path)], check=True)


def database(tmp_path: Path) -> sa.URL:
    return sa.make_url(f"sqlite:///{tmp_path / 'project' / 'dq.db'}")


def recorded(url: sa.URL) -> tuple[list[tuple], list[tuple], list[tuple]]:
    engine = sa.create_engine(url)
    with engine.connect() as connection:
        found = (
            connection.execute(
                sa.select(runs.c.check_name, runs.c.status, runs.c.outcome).order_by(
                    runs.c.check_name
                )
            ).all(),
            connection.execute(sa.select(incidents.c.check_name, incidents.c.status)).all(),
            connection.execute(
                sa.select(notifications.c.receiver, notifications.c.status).order_by(
                    notifications.c.receiver
                )
            ).all(),
        )
    engine.dispose()
    return found


@pytest.mark.parametrize("full", [True, False], ids=["full", "read-only"])
def test_a_broken_state_disk_loses_no_outcome(tmp_path, spark, full):
    env = outage_env(tmp_path)
    url = database(tmp_path)
    with broken_disk(Path(env["DQ_STATE_DIR"]), full=full):
        run = dq(env, url, "run", "--due", "--at", AT)
        assert run.returncode == EXIT_INFRA, run.stderr
        assert "local disk: cli_positive: failing rows not written" in run.stdout
        found_runs, found_incidents, sent = recorded(url)
    statuses = [(c, s) for c, s, _ in found_runs]
    assert statuses == [("cli_labelled", "passed"), ("cli_positive", "failed")]
    # recorded without the link
    assert all(not json.loads(o).get("failing_rows") for _, _, o in found_runs)
    assert [tuple(i) for i in found_incidents] == [("cli_positive", "open")]
    # alerted: the console told; the file receiver (on the broken disk) waits for a later run
    assert ("console", "sent") in [tuple(n) for n in sent]
    assert "[DQ] FAILED (level ERROR): cli_positive" in run.stderr + run.stdout


def test_a_corrupt_sqlite_file_is_an_outage_and_doctor_says_how_to_recover(tmp_path, spark):
    env = outage_env(tmp_path)
    url = database(tmp_path)
    Path(url.database).parent.mkdir(parents=True)
    Path(url.database).write_bytes(os.urandom(8192))
    run = dq(env, url, "run", "--due", "--at", AT)
    assert run.returncode == EXIT_INFRA, run.stderr
    assert "file is not a database" in run.stderr
    assert "[DQ] FAILED (level ERROR): cli_positive: 1 of 2 elements failing" in run.stderr
    assert sorted(e["check"] for e in spooled(env)) == ["cli_labelled", "cli_positive"]
    for command in ("deliver", "history"):
        assert dq(env, url, command).returncode == EXIT_INFRA
    finding = database_finding(url.render_as_string())
    assert not finding.ok and finding.detail.startswith("corrupt:")
    assert "move the file aside" in finding.fix


def test_with_the_spool_unwritable_too_the_outcomes_are_on_stderr_in_full(tmp_path, spark):
    env = outage_env(tmp_path)
    url = database(tmp_path)
    Path(url.database).parent.mkdir(parents=True)
    Path(url.database).write_bytes(os.urandom(8192))
    with broken_disk(Path(env["DQ_STATE_DIR"]), full=False):
        run = dq(env, url, "run", "--due", "--at", AT)
    assert run.returncode == EXIT_INFRA, run.stderr
    entries = [
        json.loads(line.split("; in full: ", 1)[1].rsplit("}: ", 1)[0] + "}")
        for line in run.stderr.splitlines()
        if "not spooled either" in line
    ]
    assert sorted(e["check"] for e in entries) == ["cli_labelled", "cli_positive"]
    positive = next(e for e in entries if e["check"] == "cli_positive")
    assert positive["outcome"]["failing"] == 1 and positive["window"] is not None


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def open_files(prefix: str) -> list[str]:
    """The files this process holds open whose path starts with `prefix`."""
    found = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:  # the listing's own descriptor, closed already
            continue
        if target.startswith(prefix):
            found.append(target)
    return found


def test_files_holding_row_samples_are_private_whatever_the_umask(tmp_path, spark):
    env = outage_env(tmp_path)
    url = database(tmp_path)
    previous = os.umask(0o022)
    gc.disable()  # a command's pooled connections are closed by the command, not by a collection
    try:
        assert dq(env, url, "run", "--due", "--at", AT).returncode == 1
        # otherwise a connection left open would checkpoint its WAL over the file written below
        assert open_files(str(url.database)) == []
        gc.enable()
        engine = database_engine(url.render_as_string(hide_password=False))
        with engine.connect() as connection:  # open: WAL's files exist beside it
            connection.exec_driver_sql("SELECT count(*) FROM dq_runs")
            wal = [Path(f"{url.database}-wal"), Path(f"{url.database}-shm")]
            assert {str(p): mode(p) for p in wal} == {str(p): 0o600 for p in wal}
        engine.dispose()
        for path in wal:  # a file that is not a database in its place, without its WAL's pages
            path.unlink(missing_ok=True)
        Path(url.database).write_bytes(b"not a database, so the next run spools")
        assert dq(env, url, "run", "--due", "--at", "2026-11-22T08:00:00").returncode == 4
    finally:
        gc.enable()
        os.umask(previous)
    state = Path(env["DQ_STATE_DIR"])
    sample = next((state / "failing" / "cli_positive").iterdir())  # one per run
    folders = [state, state / "failing", state / "failing" / "cli_positive", state / "spool"]
    files = [sample, state / "spool" / "outcomes.jsonl", state / "alerts.jsonl"]
    assert {str(p): mode(p) for p in folders} == {str(p): 0o700 for p in folders}
    assert {str(p): mode(p) for p in files} == {str(p): 0o600 for p in files}
    assert mode(Path(url.database)) == 0o600 and mode(Path(url.database).parent) == 0o700
    config = Config.from_environment({**env, "DQ_DATABASE_URL": url.render_as_string()})
    assert files_finding(config).ok
    sample.chmod(0o644)  # doctor checks the folders, the spool and the database
    (state / "spool").chmod(0o755)
    finding = files_finding(config)
    assert not finding.ok and f"{state / 'spool'} is 0755" in finding.detail
