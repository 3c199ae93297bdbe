"""The readiness of guarded assets in the project database (checks/readiness.py), and its
migration step."""

from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from checkers.project_db import Migration, UtcDateTime

metadata = sa.MetaData()

#: Per guarded asset, the latest verdict on it: ready after a PASSED or TOLERATED run, not ready
#: after a FAILED or ERROR one. Migration 6.
readiness = sa.Table(
    "dq_readiness",
    metadata,
    sa.Column("asset", sa.String(200), primary_key=True),
    sa.Column("check_name", sa.String(200), nullable=False),
    sa.Column("ready", sa.Boolean, nullable=False),
    sa.Column("status", sa.String(20), nullable=False),  # the outcome's status
    sa.Column("window_start", UtcDateTime),
    sa.Column("window_end", UtcDateTime, nullable=False),
    sa.Column("run_id", sa.Integer),  # the dq_runs row of the verdict
    sa.Column("marker", sa.Text),  # the marker file beside the data, when there is one
    sa.Column("error", sa.Text),  # why the marker could not be written or removed
    sa.Column("updated_at", UtcDateTime, nullable=False),
)


def _v6_readiness(connection: Connection) -> None:
    readiness.create(connection, checkfirst=True)


MIGRATIONS = [Migration(6, "readiness", _v6_readiness)]
