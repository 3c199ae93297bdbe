"""python -m benchmarks.load [N [BASELINE_N]]: the run path at company scale (issue 28). N
outcomes (default 5,000) failing at once, CRITICAL, ERROR and WARNING in turn, each in its
claimed window, recorded by the tick's `record` stage on a SQLite file, many per transaction
(`scheduling.tick.record.BATCH`), against one transaction per outcome (as before) on
BASELINE_N outcomes (default N); then the open incidents delivered tick by tick to
console-like receivers that answer at once. Prints tables; asserts nothing."""

from __future__ import annotations

import datetime as dt
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import sqlalchemy as sa

from alerting import EscalationPolicy, deliver_pending
from alerting.receivers.base import Delivery
from alerting.tables import incidents, notifications
from checkers import AlertLevel, CheckOutcome, Status
from scheduling.claims import hold_windows
from scheduling.schema import project_database
from scheduling.settings import Settings
from scheduling.tick import record as recording
from scheduling.tick.record import Recording, record, record_all

NOW = dt.datetime(2026, 11, 24, 7, 0, tzinfo=dt.UTC)
WINDOW = (NOW - dt.timedelta(minutes=15), NOW)
LEVELS = (AlertLevel.CRITICAL, AlertLevel.ERROR, AlertLevel.WARNING)
RECEIVERS = {"chat": AlertLevel.WARNING, "mail": AlertLevel.ERROR, "pager": AlertLevel.CRITICAL}


class Instant:
    """A receiver that answers at once: what delivery itself costs."""

    def __init__(self, name: str, messages_per_second: float | None = None) -> None:
        self.name = name
        self.messages_per_second = messages_per_second  # chat: Slack's, so digests apply
        self.sent = 0

    def send(self, notification: object, thread: object, step: int, **_: object) -> Delivery:
        self.sent += 1
        return Delivery(ok=True, steps_done=1)


def _subject(name: str) -> type:
    return type(name, (), {"name": name})


def _outcomes(count: int) -> list[Recording]:
    return [
        Recording(
            _subject(f"check_{i:05d}"),
            CheckOutcome(
                check=f"check_{i:05d}",
                status=Status.FAILED,
                level=LEVELS[i % 3],
                failing=3,
                total=100,
                unexcused=3,
            ),
            window=WINDOW,
        )
        for i in range(count)
    ]


def _timed(action: Callable[[], object]) -> float:
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


def recording_rate(count: int, batch: int, directory: Path) -> dict[str, float]:
    """Claim and record `count` outcomes with `batch` per transaction (1: one each)."""
    url = f"sqlite:///{directory / f'record_{batch}.db'}"
    engine = project_database(url)
    policy = EscalationPolicy(routes=RECEIVERS, repeat_every=None)
    settings = Settings(engine, {}, policy)
    items = _outcomes(count)
    windows = [(item.subject.name, *WINDOW) for item in items]
    held: list[object] = []
    claim_s = _timed(lambda: held.append(hold_windows(engine, windows)))
    claimed = held[0]
    if batch == 1:
        record_s = _timed(lambda: [record(settings, claimed, i, NOW) for i in items])  # type: ignore[arg-type]
    else:
        saved, recording.BATCH = recording.BATCH, batch
        try:
            record_s = _timed(lambda: record_all(settings, claimed, items, NOW))  # type: ignore[arg-type]
        finally:
            recording.BATCH = saved
    claimed.__exit__(None, None, None)  # type: ignore[attr-defined]
    with engine.connect() as connection:
        opened = connection.execute(sa.select(sa.func.count()).select_from(incidents)).scalar()
    engine.dispose()
    return {"claim_s": claim_s, "record_s": record_s, "incidents": float(opened or 0)}


def delivery_ticks(directory: Path, ticks: int = 3) -> list[dict[str, int]]:
    """Each tick's delivery (60 s budget) of the batched database's backlog."""
    path = directory / f"record_{recording.BATCH}.db"
    engine = project_database(f"sqlite:///{path}")
    receivers = {name: Instant(name, 1.0 if name == "chat" else None) for name in RECEIVERS}
    rows = []
    for tick in range(ticks):
        now = NOW + dt.timedelta(minutes=15 * tick)
        began = time.perf_counter()
        deliver_pending(engine, receivers, now)
        critical = sa.case((notifications.c.level == int(AlertLevel.CRITICAL), ":c"), else_="")
        with engine.connect() as connection:
            found = connection.execute(
                sa.select(notifications.c.status, critical, sa.func.count()).group_by(
                    notifications.c.status, critical
                )
            )
            counts = {f"{status}{kind}": int(count) for status, kind, count in found}
        pending = counts.get("pending", 0) + counts.get("pending:c", 0)
        folded = counts.get("grouped", 0)
        with engine.connect() as connection:
            still_open = connection.execute(
                sa.select(sa.func.count()).where(incidents.c.status == "open")
            ).scalar_one()
        rows.append(
            {
                **{n: r.sent for n, r in receivers.items()},
                "open": int(still_open),
                "seconds": round(time.perf_counter() - began, 1),
                "kib": int(sum(f.stat().st_size for f in directory.glob(f"{path.name}*")) / 1024),
                "backlog": pending,
                "critical": counts.get("pending:c", 0),
                "digested": folded,
            }
        )
        for receiver in receivers.values():
            receiver.sent = 0
    engine.dispose()
    return rows


def main(count: int, baseline: int) -> str:
    with tempfile.TemporaryDirectory() as folder:
        directory = Path(folder)
        batched = recording_rate(count, recording.BATCH, directory)
        single = recording_rate(baseline, 1, directory)
        size_kib = (directory / f"record_{recording.BATCH}.db").stat().st_size / 1024
        ticks = delivery_ticks(directory)
    lines = [
        f"## Recording {count:,} failing outcomes in one tick (SQLite file, claimed windows)",
        "",
        "| transactions | claim stage (s) | record stage (s) | outcomes recorded / s | incidents |",
        "|---|---|---|---|---|",
    ]
    for label, found in (
        ("one per outcome", single),
        (f"{recording.BATCH} per transaction", batched),
    ):
        lines.append(
            f"| {label} | {found['claim_s']:.1f} | {found['record_s']:.1f} | "
            f"{found['incidents'] / found['record_s']:.0f} | {found['incidents']:.0f} |"
        )
    rate = {
        name: found["incidents"] / found["record_s"]
        for name, found in (("single", single), ("batched", batched))
    }
    lines += [
        "",
        f"Speed-up of the record stage (outcomes / s): {rate['batched'] / rate['single']:.1f}x; "
        f"database after the tick: {size_kib:,.0f} KiB.",
        "",
        "## Delivery of the backlog, tick by tick (receivers answering at once, 60 s budget;",
        "chat at Slack's one message a second, so its backlog past 60 a run is a digest)",
        "",
        "| tick | incidents open | delivery (s) | "
        + " | ".join(f"{n} sent" for n in RECEIVERS)
        + " | backlog after | CRITICAL left | listed in a digest | database (KiB, with -wal) |",
        "|---|---|---|" + "---|" * (len(RECEIVERS) + 4),
    ]
    for tick, row in enumerate(ticks, 1):
        sent = " | ".join(str(row[n]) for n in RECEIVERS)
        lines.append(
            f"| {tick} | {row['open']} | {row['seconds']} | {sent} | {row['backlog']} | "
            f"{row['critical']} | {row['digested']} | {row['kib']:,} |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    N = int(sys.argv[1]) if len(sys.argv) > 1 else 5000
    print(main(N, int(sys.argv[2]) if len(sys.argv) > 2 else N))
