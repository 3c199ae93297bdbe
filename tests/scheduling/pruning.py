"""A project database with 120 days of daily runs for `dq prune` (tests/scheduling/test_prune.py,
benchmarks.faults): what retention removes beside what it must keep (an open incident, a pending
notification, an incremental check's partition, an anomaly check's metric history)."""

from __future__ import annotations

import datetime as dt
import os
from dataclasses import dataclass
from pathlib import Path

import sqlalchemy as sa

from alerting import EscalationPolicy, handle_outcome
from alerting.tables import incidents, notifications
from checkers import AlertLevel
from checkers.engine_tables import partitions
from checkers.metrics import Metric, MetricsRepository, ResultKey
from checkers.metrics.counts import Size
from scheduling.schema import project_database
from tests.alerting.conftest import outcome

DAY0 = dt.datetime(2026, 7, 1, 6, 0, tzinfo=dt.UTC)
NOW = DAY0 + dt.timedelta(days=120)
ROUTES = EscalationPolicy(routes={"console": AlertLevel.WARNING, "pager": AlertLevel.WARNING})


def day(n: int) -> dt.datetime:
    return DAY0 + dt.timedelta(days=n)


def metric_history(engine: sa.Engine) -> list[float]:
    """The daily row counts of `orders` an anomaly check learns from."""
    found = MetricsRepository(engine).query(source_table="orders", tags={"series": "rows"})
    return [float(record.value) for record in found]  # type: ignore[arg-type]


def pending(engine: sa.Engine) -> list[int]:
    with engine.connect() as connection:
        found = sa.select(notifications.c.id).where(notifications.c.status == "pending")
        return list(connection.execute(found.order_by(notifications.c.id)).scalars())


@dataclass
class Project:
    engine: sa.Engine
    env: dict[str, str]  # of `dq prune`
    old: Path  # a failing-rows file 45 days old
    recent: Path  # and one 3 days old


def days_of_history(tmp_path: Path) -> Project:
    """120 days of daily runs on SQLite: orders_total failed on days 5-9 (resolved long ago);
    orders_customer fails from day 10 on (open), its "pager" notifications never answered
    (pending), everything else told; an incremental check's partition; a metric history of
    120 daily row counts; two failing-rows files."""
    url = f"sqlite:///{tmp_path / 'dq.db'}"
    engine = project_database(url)
    for n in range(120):
        stamps = {"started_at": day(n), "finished_at": day(n)}
        level = AlertLevel.ERROR if 5 <= n < 10 else None
        handle_outcome(engine, outcome(level, check="orders_total", **stamps), ROUTES, day(n))
        if n >= 10:
            failed = outcome(AlertLevel.ERROR, check="orders_customer", **stamps)
            handle_outcome(engine, failed, ROUTES, day(n))
    with engine.begin() as connection:
        customer = sa.select(incidents.c.id).where(incidents.c.check_name == "orders_customer")
        connection.execute(
            notifications.update()
            .where(
                sa.or_(
                    notifications.c.receiver == "console",
                    notifications.c.incident_id.not_in(customer),
                )
            )
            .values(status="sent")
        )
        connection.execute(
            partitions.insert().values(
                check_name="orders_incremental",
                partition_key="day=2026-07-01",
                fingerprint="f",
                definition="d",
                rows=3,
                updated_at=day(0),
            )
        )
    repository = MetricsRepository(engine)
    for n in range(120):
        repository.save(
            ResultKey(day(n), {"series": "rows"}),
            [Metric(Size(), value=100.0 + n % 7)],
            source_table="orders",
        )
    failing_rows = tmp_path / "state" / "failing" / "orders_total"
    failing_rows.mkdir(parents=True)
    old, recent = failing_rows / "old.jsonl", failing_rows / "recent.jsonl"
    for path, age in ((old, 45), (recent, 3)):
        path.write_text("{}\n")
        stamp = (NOW - dt.timedelta(days=age)).timestamp()
        os.utime(path, (stamp, stamp))
    env = {
        "DQ_DATABASE_URL": url,
        "DQ_STATE_DIR": str(tmp_path / "state"),
        "DQ_CONFIG": str(tmp_path / "none.toml"),
    }
    return Project(engine, env, old, recent)
