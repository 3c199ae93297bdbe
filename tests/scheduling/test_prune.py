"""`dq prune` (issue 28, acceptance 7) on a database with 120 days of daily runs: runs, resolved
incidents with their notifications, done claims and failing-row files past their retention go;
an open incident from day 10 with its runs, a notification still pending, incremental checks'
stored partitions and the metric history an anomaly check learns from stay, and the anomaly
strategy judges the latest value the same way after."""

from __future__ import annotations

import datetime as dt
import os

import sqlalchemy as sa

from alerting import EscalationPolicy, handle_outcome
from alerting.tables import incidents, notifications, runs
from checkers import AlertLevel
from checkers.engine_tables import partitions
from checkers.metrics import Metric, MetricsRepository, ResultKey
from checkers.metrics.anomaly import OnlineNormal
from checkers.metrics.counts import Size
from scheduling.schema import project_database
from tests.alerting.conftest import outcome
from tests.scheduling import in_process

DAY0 = dt.datetime(2026, 7, 1, 6, 0, tzinfo=dt.UTC)
NOW = DAY0 + dt.timedelta(days=120)
ROUTES = EscalationPolicy(routes={"console": AlertLevel.WARNING, "pager": AlertLevel.WARNING})


def day(n: int) -> dt.datetime:
    return DAY0 + dt.timedelta(days=n)


def _history(engine: sa.Engine) -> list[float]:
    found = MetricsRepository(engine).query(source_table="orders", tags={"series": "rows"})
    return [float(record.value) for record in found]  # type: ignore[arg-type]


def test_prune_keeps_what_is_still_needed(tmp_path):
    url = f"sqlite:///{tmp_path / 'dq.db'}"
    engine = project_database(url)
    for n in range(120):
        # orders_total failed on days 5-9 (resolved long ago); orders_customer fails from day 10
        failing = 5 <= n < 10
        stamps = {"started_at": day(n), "finished_at": day(n)}
        level = AlertLevel.ERROR if failing else None
        handle_outcome(engine, outcome(level, check="orders_total", **stamps), ROUTES, day(n))
        if n >= 10:
            failed = outcome(AlertLevel.ERROR, check="orders_customer", **stamps)
            handle_outcome(engine, failed, ROUTES, day(n))
    with engine.begin() as connection:  # all told, but "pager" never answered about the open one
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
        )  # an incremental check's partition
    repository = MetricsRepository(engine)
    for n in range(120):
        repository.save(
            ResultKey(day(n), {"series": "rows"}),
            [Metric(Size(), value=100.0 + n % 7)],
            source_table="orders",
        )
    with engine.connect() as connection:
        pending_before = (
            connection.execute(
                sa.select(notifications.c.id).where(notifications.c.status == "pending")
            )
            .scalars()
            .all()
        )
    history = _history(engine)
    judged = OnlineNormal().detect([*history, 180.0], start=len(history))
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
    done = in_process.dq(env, "prune", "--at", NOW.isoformat(), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "pruned 30 runs, 1 resolved incidents" in done.stdout
    assert "1 failing-row files" in done.stdout

    with engine.connect() as connection:
        kept = connection.execute(
            sa.select(runs.c.check_name, sa.func.count()).group_by(runs.c.check_name)
        ).all()
        open_incidents = (
            connection.execute(
                sa.select(incidents.c.check_name).where(incidents.c.status == "open")
            )
            .scalars()
            .all()
        )
        pending = (
            connection.execute(  # the open incident's, not yet delivered
                sa.select(notifications.c.id).where(notifications.c.status == "pending")
            )
            .scalars()
            .all()
        )
        stored = connection.execute(sa.select(sa.func.count()).select_from(partitions)).scalar()
    # orders_total: the last 90 days; orders_customer: all 110 (its incident is open)
    assert dict(kept) == {"orders_total": 90, "orders_customer": 110}
    assert open_incidents == ["orders_customer"] and pending == pending_before != [] and stored == 1
    assert _history(engine) == history  # the anomaly history is whole ...
    after = _history(engine)
    assert (
        OnlineNormal().detect([*after, 180.0], start=len(after)) == judged
    )  # ... and judges alike
    assert judged  # 180 rows after a week of 100-106 is an anomaly
    assert not old.exists() and recent.exists()
    engine.dispose()
