"""A run killed inside a recording batch: `python -m tests.scheduling.batch_crasher URL BATCH
KILL_AT`. It claims the windows of CHECKS (lease LEASE), records one failing outcome each,
BATCH to a transaction, and SIGKILLs itself right after the KILL_AT-th run row is written."""

from __future__ import annotations

import datetime as dt
import os
import signal
import sys

import sqlalchemy as sa

from alerting.policy import EscalationPolicy
from checkers import AlertLevel, CheckOutcome, Status
from scheduling.claims import hold_windows
from scheduling.schema import project_database
from scheduling.settings import Settings
from scheduling.tick import record as recording

CHECKS = [f"crash_{i}" for i in range(6)]
END = dt.datetime(2026, 11, 22, 7, 0, tzinfo=dt.UTC)
WINDOW = (END - dt.timedelta(minutes=15), END)
LEASE = dt.timedelta(seconds=1)
POLICY = EscalationPolicy(routes={"chat": AlertLevel.WARNING})


def recordings() -> list[recording.Recording]:
    """Each check's failing outcome in its window (a subject needs only a name)."""
    return [
        recording.Recording(
            type(name, (), {"name": name}),  # type: ignore[arg-type]
            CheckOutcome(check=name, status=Status.FAILED, level=AlertLevel.ERROR, failing=1),
            window=WINDOW,
        )
        for name in CHECKS
    ]


if __name__ == "__main__":
    url, batch, kill_at = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    engine = project_database(url)
    written = []

    @sa.event.listens_for(engine, "after_cursor_execute")
    def _die_mid_batch(conn, cursor, statement, *_):  # type: ignore[no-untyped-def]
        if statement.startswith("INSERT INTO dq_runs"):
            written.append(statement)
            if len(written) == kill_at:
                os.kill(os.getpid(), signal.SIGKILL)

    held = hold_windows(engine, [(name, *WINDOW) for name in CHECKS], lease=LEASE)
    recording.BATCH = batch
    recording.record_all(Settings(engine, {}, POLICY), held, recordings(), END)
