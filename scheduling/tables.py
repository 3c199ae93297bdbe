"""Scheduling's tables in the project database: window claims, each check's last window end and
the spool entries already replayed; with their migration steps. (Run history, `dq_runs`, is
written with each incident: alerting/tables.py.)"""

from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from checkers.project_db import Migration, UtcDateTime
from checkers.project_db.ddl import widen_for_mysql

metadata = sa.MetaData()

scheduler_windows = sa.Table(
    "dq_scheduler_windows",
    metadata,
    sa.Column("check_name", sa.String(200), primary_key=True),
    sa.Column("last_window_end", UtcDateTime, nullable=False),
)

#: Spool entries already recorded (scheduling/spool.py): a replay cut short by a crash skips them.
spool_replays = sa.Table(
    "dq_spool_replays",
    metadata,
    sa.Column("entry_id", sa.String(64), primary_key=True),
    sa.Column("check_name", sa.String(200), nullable=False),
    sa.Column("replayed_at", UtcDateTime, nullable=False),
)

claims = sa.Table(
    "dq_claims",
    metadata,
    # One claim per (check, window start): concurrent runs at slightly different times compute
    # windows with the same start (the check's last window end), an Airflow retry the same one.
    sa.Column("check_name", sa.String(200), primary_key=True),
    sa.Column("window_start", UtcDateTime, primary_key=True),
    sa.Column("window_end", UtcDateTime, nullable=False),
    sa.Column("holder", sa.String(200), nullable=False),  # host:pid:token
    sa.Column("status", sa.String(20), nullable=False),  # running | done
    sa.Column("claimed_at", UtcDateTime, nullable=False),
    sa.Column("lease_until", UtcDateTime, nullable=False),
    sa.Column("finished_at", UtcDateTime),
    sa.Column("run_id", sa.Integer),  # the dq_runs row that recorded the window
    sa.Column("outcome_status", sa.String(20)),
)


def _v2_scheduler_windows(connection: Connection) -> None:
    scheduler_windows.create(connection)


def _v3_claims(connection: Connection) -> None:
    claims.create(connection, checkfirst=True)
    widen_for_mysql(connection, [scheduler_windows])


def _v5_spool_replays(connection: Connection) -> None:
    spool_replays.create(connection)


MIGRATIONS = [
    Migration(2, "scheduling", _v2_scheduler_windows),
    Migration(3, "scheduling", _v3_claims),
    Migration(5, "scheduling", _v5_spool_replays),
]
