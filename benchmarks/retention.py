"""python -m benchmarks.retention [CHECKS [DAYS [RUNS_PER_DAY]]]: the project database's size day
by day, with the daily prune of [retention] (its defaults: 90 days) and without it (issue 28).

CHECKS checks (default 100) run RUNS_PER_DAY times a day (default 4) for DAYS days (default 120),
recorded by the tick's `record` stage; one check in ten fails at each run in turn, so incidents
open, are told (to receivers that answer at once) and resolve when the check passes again. One
SQLite file is pruned once a day as the tick's `prune_history` stage does; the other never is.
Window claims are stamped `finished_at` by the database's clock (real time, not this simulated
calendar), so here they are never old enough to prune: the pruned file keeps growing by their rows
alone (about 0.1 MiB a day at the defaults). Prints a table; asserts nothing."""

from __future__ import annotations

import datetime as dt
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

from alerting import EscalationPolicy, deliver_pending
from alerting.receivers.base import Delivery
from checkers import AlertLevel, CheckOutcome, Status
from scheduling.claims import hold_windows
from scheduling.retention import Retention, prune
from scheduling.schema import project_database
from scheduling.settings import Settings
from scheduling.tick.record import Recording, record_all

START = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
ROUTES = {"chat": AlertLevel.WARNING, "pager": AlertLevel.CRITICAL}


class Instant:
    """A receiver that answers at once."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.messages_per_second = None

    def send(self, notification: object, thread: object, step: int, **_: object) -> Delivery:
        return Delivery(ok=True, steps_done=1)


def _subject(name: str) -> type:
    return type(name, (), {"name": name})


def _outcome(check: str, failing: bool) -> CheckOutcome:
    return CheckOutcome(
        check=check,
        status=Status.FAILED if failing else Status.PASSED,
        level=AlertLevel.ERROR if failing else AlertLevel.OK,
        failing=3 if failing else 0,
        total=100,
        unexcused=3 if failing else 0,
    )


def _size(path: Path) -> tuple[float, float]:
    """(file MiB with its -wal, MiB of pages in use)."""
    files = sum(f.stat().st_size for f in path.parent.glob(f"{path.name}*"))
    with sqlite3.connect(path) as connection:
        pages, free, size = (
            connection.execute(f"PRAGMA {name}").fetchone()[0]
            for name in ("page_count", "freelist_count", "page_size")
        )
    return files / 2**20, (pages - free) * size / 2**20


def one_run(settings: Settings, checks: int, run: int, at: dt.datetime, step: dt.timedelta) -> None:
    names = [f"check_{i:04d}" for i in range(checks)]
    window = (at - step, at)
    items = [
        Recording(_subject(name), _outcome(name, (i + run) % 10 == 0), window=window)
        for i, name in enumerate(names)
    ]
    with hold_windows(settings.engine, [(name, *window) for name in names]) as held:
        record_all(settings, held, items, at)


def main(checks: int, days: int, runs_per_day: int) -> str:
    step = dt.timedelta(days=1) / runs_per_day
    receivers = {name: Instant(name) for name in ROUTES}
    policy = EscalationPolicy(routes=ROUTES, repeat_every=None)
    rows: list[tuple[int, float, float, float, float]] = []
    with tempfile.TemporaryDirectory() as folder:
        paths = {kind: Path(folder) / f"{kind}.db" for kind in ("pruned", "kept")}
        settings = {
            kind: Settings(project_database(f"sqlite:///{path}"), {}, policy)
            for kind, path in paths.items()
        }
        run = 0
        began = time.perf_counter()
        for day in range(1, days + 1):
            for _ in range(runs_per_day):
                at = START + run * step + step
                for setting in settings.values():
                    one_run(setting, checks, run, at, step)
                    deliver_pending(setting.engine, receivers, at)
                run += 1
            prune(settings["pruned"], START + dt.timedelta(days=day), Retention())
            if day in (1, 7) or day % 30 == 0 or day == days:
                (pruned, pruned_used), (kept, _) = (_size(paths[k]) for k in ("pruned", "kept"))
                rows.append((day, pruned, pruned_used, kept, time.perf_counter() - began))
        with sqlite3.connect(paths["pruned"]) as connection:
            tables = [
                name
                for (name,) in connection.execute(
                    "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name"
                )
            ]
            counts = {
                t: connection.execute(f'SELECT count(*) FROM "{t}"').fetchone()[0] for t in tables
            }
        for setting in settings.values():
            setting.engine.dispose()
    per_day = checks * runs_per_day
    lines = [
        f"## Project database size by day: {checks} checks, {runs_per_day} runs a day "
        f"({per_day:,} outcomes a day, one in ten failing), SQLite",
        "",
        "| day | with [retention] (MiB on disk) | pages in use (MiB) | without (MiB) "
        "| elapsed (s) |",
        "|---|---|---|---|---|",
    ]
    for day, pruned, used, kept, elapsed in rows:
        lines.append(f"| {day} | {pruned:.1f} | {used:.1f} | {kept:.1f} | {elapsed:.0f} |")
    lines += [
        "",
        f"Rows on day {days} with [retention]: "
        + ", ".join(f"{t} {n:,}" for t, n in counts.items() if n),
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    arguments = [int(a) for a in sys.argv[1:4]]
    defaults = [100, 120, 4]
    print(main(*(arguments + defaults[len(arguments) :])))
