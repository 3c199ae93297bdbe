"""A project database written by wave 2 (main at 76ad31a; tests/upgrade/make_wave2_db.py) keeps
working with this code: migrations apply and lose nothing, the next run of its incremental check
reads no partition, its open incident stays the same incident, the notifications Slack refused
then are delivered now, and the metric history and engine states are still there."""

from __future__ import annotations

import datetime as dt
import shutil
from pathlib import Path

import pytest
import sqlalchemy as sa

from alerting import EscalationPolicy, RetryPolicy
from alerting.receivers import SlackReceiver
from checkers import AlertLevel
from checkers.metrics import Mean, MetricsRepository, Size, SqlStateStore, metrics_for_view
from scheduling.runner import run_due
from scheduling.schema import project_database
from scheduling.settings import Settings
from tests.alerting.servers import PagerDutyStandIn, SlackStandIn, http_server
from tests.upgrade.wave2_checks import CHECKS, SCHEMA, SERIES, VIEW, OrdersHaveAmounts

FIXTURE = Path(__file__).parent / "wave2"
WRITTEN_AT = dt.datetime(2026, 11, 22, 6, 0, tzinfo=dt.UTC)  # the fixture's tick
NEXT_TICK = WRITTEN_AT + dt.timedelta(days=1)
SLACK_TOKEN = "xoxb-wave2-fixture"
WAVE2_VERSIONS = set(range(1, 9))


def _contents(engine: sa.Engine, columns: dict[str, list[str]]) -> dict[str, set[tuple]]:
    """Every row of each table, over the given columns (those wave 2 had)."""
    found = {}
    with engine.connect() as connection:
        for table, names in columns.items():
            selected = ", ".join(names)
            rows = connection.exec_driver_sql(f"SELECT {selected} FROM {table}").all()
            found[table] = {tuple(r) for r in rows}
    return found


@pytest.fixture
def wave2(tmp_path, monkeypatch, spark) -> Path:
    """A copy of the fixture, the environment of its deployment, and its source registered."""
    folder = tmp_path / "wave2"
    shutil.copytree(FIXTURE, folder)
    monkeypatch.setenv("DQ_DATABASE_URL", f"sqlite:///{folder / 'dq.db'}")
    monkeypatch.setenv("DQ_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("SLACK_BOT_TOKEN", SLACK_TOKEN)
    orders = spark.read.csv(str(folder / "orders.csv"), header=True, schema=SCHEMA)
    orders.createOrReplaceTempView(VIEW)
    return folder


def test_a_wave2_database_migrates_and_keeps_working(wave2, spark):
    url = f"sqlite:///{wave2 / 'dq.db'}"
    raw = sa.create_engine(url)
    with raw.connect() as connection:
        inspector = sa.inspect(connection)
        columns = {
            t: [c["name"] for c in inspector.get_columns(t)] for t in inspector.get_table_names()
        }
        versions = set(
            connection.exec_driver_sql("SELECT version FROM dq_schema_versions").scalars()
        )
        (incident,) = connection.exec_driver_sql(
            "SELECT id FROM dq_incidents WHERE status = 'open'"
        ).scalars()
        pending = set(
            connection.exec_driver_sql(
                "SELECT dedup_key FROM dq_notifications WHERE status = 'pending'"
            ).scalars()
        )
    before = _contents(raw, columns)
    raw.dispose()
    assert versions >= WAVE2_VERSIONS and pending
    assert {"dq_metrics", "dq_states", "dq_partition_states"} <= set(columns)

    engine = project_database(url)  # migrates
    after = _contents(engine, columns)
    assert before["dq_schema_versions"] <= after.pop("dq_schema_versions")
    assert after == {t: rows for t, rows in before.items() if t != "dq_schema_versions"}

    slack = SlackStandIn(SLACK_TOKEN)
    with http_server(slack, PagerDutyStandIn()) as http:
        settings = Settings(
            engine=engine,
            receivers={"slack": SlackReceiver("slack", "C0DQ", base_url=f"{http}/api/")},
            default_policy=EscalationPolicy(routes={"slack": AlertLevel.WARNING}),
            delivery=RetryPolicy(short_wait_s=0.0, budget_s=10.0),
            spool_dir=wave2 / "spool",
        )
        report = run_due(NEXT_TICK, settings=settings, checks=CHECKS, spark=spark)

    outcomes = {o.check: o for o in report.outcomes}
    amounts = outcomes[OrdersHaveAmounts.name]
    assert amounts.error is None, amounts.error
    assert dict(amounts.reading) == {"rows_read": 0, "partitions_read": 0, "partitions": 2}
    assert (amounts.status.value, amounts.failing, amounts.total) == ("failed", 2, 7)

    with engine.connect() as connection:
        still_open = connection.exec_driver_sql(
            "SELECT id, failing_runs FROM dq_incidents WHERE status = 'open'"
        ).all()
        sent = set(
            connection.exec_driver_sql(
                "SELECT dedup_key FROM dq_notifications WHERE status = 'sent'"
            ).scalars()
        )
    assert still_open == [(incident, 2)]
    assert pending <= sent
    assert slack.roots(), "the pending notification reached Slack"

    repository = MetricsRepository(url)
    sizes = repository.history(Size(), source_table=VIEW, before=NEXT_TICK, tags=SERIES)
    assert sizes == [(WRITTEN_AT, 7.0)]  # wave 2's row, read back by today's code
    everything = repository.query(source_table=VIEW, tags=SERIES)
    assert [r.dataset_time for r in everything] == [WRITTEN_AT, NEXT_TICK]
    with engine.connect() as connection:  # migration 11: periods annotated on a check's history
        assert sa.inspect(connection).has_table("dq_metric_periods")

    states = metrics_for_view(
        SqlStateStore(url, frequency_root=wave2 / "freq"),
        [Size(), Mean("amount")],
        dataset="orders",
    )
    assert states.metric(Size()).value == 7
    assert states.metric(Mean("amount")).value == pytest.approx(108.4 / 7)
