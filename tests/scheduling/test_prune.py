"""`dq prune` (issue 28, acceptance 7) on a database with 120 days of daily runs: runs, resolved
incidents with their notifications, done claims and failing-row files past their retention go;
an open incident from day 10 with its runs, a notification still pending, incremental checks'
stored partitions and the metric history an anomaly check learns from stay, and the anomaly
strategy judges the latest value the same way after."""

from __future__ import annotations

import datetime as dt
import os
import signal
import subprocess
import sys
from pathlib import Path

import sqlalchemy as sa

from alerting import handle_outcome
from alerting.tables import incidents, runs
from checkers.engine_tables import partitions
from checkers.metrics.anomaly import OnlineNormal
from scheduling.retention import PRUNE_CLAIM
from scheduling.settings import Settings
from scheduling.tables import claims
from scheduling.tick.pipeline import TickRequest, run_tick
from tests.alerting.conftest import outcome
from tests.scheduling import in_process
from tests.scheduling.pruning import (
    DAY0,
    NOW,
    ROUTES,
    day,
    days_of_history,
    metric_history,
    pending,
)


def test_prune_keeps_what_is_still_needed(tmp_path):
    project = days_of_history(tmp_path)
    engine = project.engine
    pending_before = pending(engine)
    history = metric_history(engine)
    judged = OnlineNormal().detect([*history, 180.0], start=len(history))

    done = in_process.dq(project.env, "prune", "--at", NOW.isoformat(), cwd=tmp_path)
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
        stored = connection.execute(sa.select(sa.func.count()).select_from(partitions)).scalar()
    # orders_total: the last 90 days; orders_customer: all 110 (its incident is open)
    assert dict(kept) == {"orders_total": 90, "orders_customer": 110}
    # the open incident's notifications, not yet delivered, stay
    assert open_incidents == ["orders_customer"] and pending(engine) == pending_before != []
    assert stored == 1
    assert metric_history(engine) == history  # the anomaly history is whole ...
    after = metric_history(engine)
    assert (
        OnlineNormal().detect([*after, 180.0], start=len(after)) == judged
    )  # ... and judges alike
    assert judged  # 180 rows after a week of 100-106 is an anomaly
    assert not project.old.exists() and project.recent.exists()
    engine.dispose()


def _passed(engine: sa.Engine, n: int) -> None:
    """A passing run of orders_total on day `n`."""
    stamps = {"started_at": day(n), "finished_at": day(n)}
    handle_outcome(engine, outcome(None, check="orders_total", **stamps), ROUTES, day(n))


def _kept(engine: sa.Engine) -> list[int]:
    """The days of the runs still stored, in the order they were recorded."""
    with engine.connect() as connection:
        ended = connection.execute(sa.select(runs.c.finished_at).order_by(runs.c.id))
        return [(t.replace(tzinfo=dt.UTC) - DAY0).days for t in ended.scalars()]


def _ten_days_retention(tmp_path, monkeypatch) -> Settings:
    """dq.toml's [retention] runs_days = 10, in the environment a tick reads."""
    (tmp_path / "dq.toml").write_text("[retention]\nruns_days = 10\n")
    monkeypatch.setenv("DQ_DATABASE_URL", f"sqlite:///{tmp_path / 'dq.db'}")
    monkeypatch.setenv("DQ_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("DQ_CONFIG", str(tmp_path / "dq.toml"))
    return Settings.from_environment()


def test_the_tick_prunes_once_a_day_with_dq_toml_retention(tmp_path, monkeypatch):
    """dq.toml's [retention] runs_days = 10: the day's first tick prunes (the day claimed, so
    later ticks that day do not), the next day's first tick prunes again."""
    settings = _ten_days_retention(tmp_path, monkeypatch)
    engine = settings.engine
    for n in range(30):
        _passed(engine, n)
    run_tick(TickRequest(now=day(30)), settings)
    assert _kept(engine) == list(range(20, 30))  # runs older than 10 days gone
    _passed(engine, 5)  # a late backfill of day 5
    run_tick(TickRequest(now=day(30) + dt.timedelta(hours=6)), settings)
    assert _kept(engine) == [*range(20, 30), 5]  # the day was pruned once already
    run_tick(TickRequest(now=day(31)), settings)
    assert _kept(engine) == list(range(21, 30))  # the next day's first tick prunes again
    engine.dispose()


def test_a_tick_killed_while_pruning_loses_nothing_and_the_day_is_pruned_once(
    tmp_path, monkeypatch
):
    """A real tick SIGKILLed in its prune_history stage, with the day claimed and the old runs
    deleted in a transaction not yet committed (tests/scheduling/stage_crasher.py): nothing is
    removed; while the dead runner's lease lasts no other tick prunes; once it ran out, the next
    tick prunes the day, once."""
    from tests.scheduling import stage_crasher as crasher

    settings = _ten_days_retention(tmp_path, monkeypatch)
    engine = settings.engine
    for n in range(30):
        _passed(engine, n)
    assert day(30) == crasher.PRUNE_AT
    killed = subprocess.run(
        [sys.executable, "-m", "tests.scheduling.stage_crasher", "prune", str(engine.url)],
        env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])},
        capture_output=True,
        text=True,
        check=False,
    )
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert _kept(engine) == list(range(30))  # the deletes died with their transaction

    def prune_claim() -> tuple[str, str]:
        with engine.connect() as connection:
            found = connection.execute(
                sa.select(claims.c.status, claims.c.holder).where(
                    claims.c.check_name == PRUNE_CLAIM
                )
            )
            return tuple(found.one())

    status, dead = prune_claim()
    assert status == "running"
    run_tick(TickRequest(now=day(30) + dt.timedelta(hours=6)), settings)
    assert _kept(engine) == list(range(30)) and prune_claim() == ("running", dead)  # still held

    with engine.begin() as connection:  # the dead runner's hour runs out
        connection.execute(
            claims.update()
            .where(claims.c.check_name == PRUNE_CLAIM)
            .values(lease_until=dt.datetime(2000, 1, 1, tzinfo=dt.UTC))
        )
    run_tick(TickRequest(now=day(30) + dt.timedelta(hours=12)), settings)
    assert _kept(engine) == list(range(21, 30))  # 10 days before this tick: day 20 at 06:00 too
    status, holder = prune_claim()
    assert status == "done" and holder != dead
    _passed(engine, 5)  # a late backfill of day 5: the day is not pruned twice
    run_tick(TickRequest(now=day(30) + dt.timedelta(hours=15)), settings)  # 21:00, same day
    assert _kept(engine) == [*range(21, 30), 5]
    engine.dispose()


def test_a_retention_that_is_not_whole_days_is_refused_by_every_command(tmp_path):
    (tmp_path / "dq.toml").write_text("[retention]\nruns_days = 0.5\n")
    env = {
        "DQ_DATABASE_URL": f"sqlite:///{tmp_path / 'dq.db'}",
        "DQ_STATE_DIR": str(tmp_path / "state"),
        "DQ_CONFIG": str(tmp_path / "dq.toml"),
    }
    refused = in_process.dq(env, "prune", cwd=tmp_path)
    assert refused.returncode == 2
    assert "dq.toml:2" in refused.stderr and "runs_days must be a whole number" in refused.stderr
