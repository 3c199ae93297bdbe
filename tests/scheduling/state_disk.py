"""The local disk under `dq run` (tests/scheduling/test_state_disk.py, benchmarks.faults): a state
directory on a full or read-only 1 MiB tmpfs, the project's SQLite file and what it recorded, and
the runs under umask 022 after which every file dq created must be private."""

from __future__ import annotations

import contextlib
import gc
import os
import stat
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import sqlalchemy as sa

from alerting.tables import incidents, notifications, runs
from checkers.project_db import database_engine
from tests.scheduling.outages import dq

AT = "2026-11-22T07:00:00"


@contextlib.contextmanager
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
        if full:  # written until the file system refuses (the loop ends no other way)
            with (path / "filler").open("wb") as filler, contextlib.suppress(OSError):
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
    """The runs (check, status, outcome JSON), incidents (check, status) and notifications
    (receiver, status) stored at `url`."""
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


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@dataclass(frozen=True)
class UmaskRuns:
    first: subprocess.CompletedProcess[str]  # `dq run --due` at 07:00
    left_open: list[str]  # the database's files this process still held open after it
    wal: dict[str, int]  # the modes of the database's WAL files while it was open
    second: subprocess.CompletedProcess[str]  # at 08:00, the database not one any more


def runs_under_umask_022(env: dict[str, str], url: sa.URL) -> UmaskRuns:
    """With umask 022 (restored afterwards): a `dq run --due` at 07:00; the modes of the
    database's WAL files while it is open; then, the database replaced by a file that is not one
    (without its WAL's pages), the run at 08:00, which spools."""
    previous = os.umask(0o022)
    gc.disable()  # a command's pooled connections are closed by the command, not by a collection
    try:
        first = dq(env, url, "run", "--due", "--at", AT)
        # a connection left open would checkpoint its WAL over the file written below
        left_open = open_files(str(url.database))
        gc.enable()
        engine = database_engine(url.render_as_string(hide_password=False))
        wal = [Path(f"{url.database}-wal"), Path(f"{url.database}-shm")]
        with engine.connect() as connection:  # open: WAL's files exist beside it
            connection.exec_driver_sql("SELECT count(*) FROM dq_runs")
            modes = {str(p): mode(p) for p in wal}
        engine.dispose()
        for path in wal:
            path.unlink(missing_ok=True)
        Path(str(url.database)).write_bytes(b"not a database, so the next run spools")
        second = dq(env, url, "run", "--due", "--at", "2026-11-22T08:00:00")
        return UmaskRuns(first, left_open, modes, second)
    finally:
        gc.enable()
        os.umask(previous)


def private_paths(env: dict[str, str], url: sa.URL) -> tuple[list[Path], list[Path]]:
    """The folders and files those runs created that hold row samples: the state directory and
    its failing-rows and spool folders and the database's folder; a failing-rows file, the
    spool, the file receiver's alerts and the database."""
    state = Path(env["DQ_STATE_DIR"])
    sample = next((state / "failing" / "cli_positive").iterdir())  # one per run
    database = Path(str(url.database))
    folders = [
        state,
        state / "failing",
        state / "failing" / "cli_positive",
        state / "spool",
        database.parent,
    ]
    return folders, [sample, state / "spool" / "outcomes.jsonl", state / "alerts.jsonl", database]
