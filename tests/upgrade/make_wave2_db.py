"""Builds tests/upgrade/wave2/: the project database of a deployment of the second wave, as
test_upgrade_from_wave2.py finds it. Run on commit 76ad31a (main at the end of wave 2), never
again: the point of the fixture is that it was written by that code.

    git worktree add /tmp/wave2 76ad31a && cd /tmp/wave2
    cp <this file> <wave2_checks.py> tests/upgrade/
    PYTHONPATH=/tmp/wave2 python -m tests.upgrade.make_wave2_db

It writes orders.csv (two days of orders, two of them without a positive amount) and dq.db,
into which one tick of the scheduler (`run_due`, 2026-11-22 06:00 UTC) recorded:
* all migrations of that version (1 to 8);
* wave2_orders_have_amounts, incremental, FAILED: an OPEN incident, its run and done claim,
  and the stored states of both partitions (day=2026-11-20, day=2026-11-21);
* its Slack notification PENDING: Slack answered 500 (a stand-in that is down), so the
  receiver is in backoff and the row waits for a later run;
* wave2_orders_volume, PASSED, with its metrics in the metrics repository (dq_metrics);
* the engine's own state table (dq_states), written by SqlStateStore for dataset "orders"."""

from __future__ import annotations

import datetime as dt
import os
import sqlite3
import sys
import tempfile
from pathlib import Path

import pandas as pd
import sqlalchemy as sa
from checkers.storage import project_database
from pyspark.sql import SparkSession

from alerting import EscalationPolicy, RetryPolicy
from alerting.receivers import SlackReceiver
from checkers import AlertLevel
from checkers.metrics import Mean, Size, SqlStateStore, run_analysis
from scheduling.runner import run_due
from scheduling.settings import Settings
from tests.alerting.servers import PagerDutyStandIn, SlackStandIn, http_server
from tests.upgrade.wave2_checks import CHECKS, SCHEMA, VIEW

FIXTURE = Path(__file__).parent / "wave2"
NOW = dt.datetime(2026, 11, 22, 6, 0, tzinfo=dt.UTC)
SLACK_TOKEN = "xoxb-wave2-fixture"
#: The engine-level states (dq_states): dataset, analyzers.
STATES_DATASET = "orders"
STATE_ANALYZERS = [Size(), Mean("amount")]

ORDERS = pd.DataFrame(
    {
        "order_id": [1, 2, 3, 4, 5, 6, 7],
        "day": ["2026-11-20"] * 4 + ["2026-11-21"] * 3,
        "amount": [12.5, 30.0, -4.0, 8.0, 19.9, 0.0, 42.0],
        "updated_at": [
            "2026-11-20T08:00:00Z",
            "2026-11-20T09:30:00Z",
            "2026-11-20T11:00:00Z",
            "2026-11-20T17:45:00Z",
            "2026-11-21T07:10:00Z",
            "2026-11-21T12:00:00Z",
            "2026-11-21T20:20:00Z",
        ],
    }
)


def register_orders(spark: SparkSession, folder: Path) -> None:
    """The view the checks read: folder/orders.csv."""
    frame = spark.read.csv(str(folder / "orders.csv"), header=True, schema=SCHEMA)
    frame.createOrReplaceTempView(VIEW)


def main() -> None:
    FIXTURE.mkdir(exist_ok=True)
    database = FIXTURE / "dq.db"
    database.unlink(missing_ok=True)
    ORDERS.to_csv(FIXTURE / "orders.csv", index=False)
    url = f"sqlite:///{database}"
    scratch = Path(tempfile.mkdtemp(prefix="wave2-"))
    os.environ.update(
        DQ_DATABASE_URL=url, DQ_STATE_DIR=str(scratch), SLACK_BOT_TOKEN=SLACK_TOKEN, TZ="UTC"
    )
    spark = (
        SparkSession.builder.master("local[1]")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .getOrCreate()
    )
    register_orders(spark, FIXTURE)
    slack = SlackStandIn(SLACK_TOKEN)
    slack.down = True  # Slack answers 500: the notification stays pending
    with http_server(slack, PagerDutyStandIn()) as http:
        settings = Settings(
            engine=project_database(url),
            receivers={"slack": SlackReceiver("slack", "C0DQ", base_url=f"{http}/api/")},
            default_policy=EscalationPolicy(routes={"slack": AlertLevel.WARNING}),
            delivery=RetryPolicy(short_wait_s=0.0, budget_s=5.0),
            spool_dir=scratch / "spool",
        )
        report = run_due(NOW, settings=settings, checks=CHECKS, spark=spark)
    for outcome in report.outcomes:
        print(outcome.check, outcome.status.value, outcome.failing, dict(outcome.reading))
    assert report.delivery is not None and report.delivery.pending, report.delivery
    store = SqlStateStore(url, frequency_root=scratch / "freq")
    orders = spark.table(VIEW)
    for day in sorted(ORDERS["day"].unique()):
        run_analysis(
            orders.where(orders.day == day),
            STATE_ANALYZERS,
            state_store=store,
            dataset=STATES_DATASET,
            partition=f"day={day}",
        )
    engine = sa.create_engine(url)
    with engine.connect() as connection:
        for table in sa.inspect(connection).get_table_names():
            count = connection.exec_driver_sql(f"SELECT COUNT(*) FROM {table}").scalar()
            print(f"{table}: {count}")
    engine.dispose()
    raw = sqlite3.connect(database, isolation_level=None)
    raw.execute("VACUUM")  # a small fixture
    raw.close()
    spark.stop()


if __name__ == "__main__":
    sys.exit(main())
