"""What "this is expected" leaves behind for later runs: an annotation on the metric points of
the incident's run (anomaly detection trains on them and accepts their values), and, when asked,
the failing keys as known broken for the check until a time. The tables are the engine's
(checkers.engine_tables): the checkers read them when they judge."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Sequence

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from alerting.model import Incident
from alerting.triage.values import Actor
from checkers.engine_tables import known_broken_keys, metric_annotations, metrics_table

EXPECTED = "expected"


def annotate_run_metrics(
    connection: Connection, incident: Incident, actor: Actor, note: str, now: dt.datetime
) -> int:
    """Annotate as expected the metric points the check's latest run saved (the run that kept
    the incident open); returns how many. None saved (a row check, or a database without metric
    history): nothing to annotate."""
    if not sa.inspect(connection).has_table(metrics_table.name):
        return 0
    t = metrics_table
    latest = connection.execute(
        sa.select(t.c.dataset_time, t.c.partition_id)
        .where(t.c.check_name == incident.check)
        .order_by(t.c.id.desc())
        .limit(1)
    ).first()
    if latest is None:
        return 0
    same_partition = (
        t.c.partition_id.is_(None)
        if latest.partition_id is None
        else t.c.partition_id == latest.partition_id
    )
    ids = (
        connection.execute(
            sa.select(t.c.id).where(
                t.c.check_name == incident.check,
                t.c.dataset_time == latest.dataset_time,
                same_partition,
            )
        )
        .scalars()
        .all()
    )
    if ids:
        connection.execute(
            metric_annotations.insert(),
            [
                {
                    "metric_id": metric_id,
                    "kind": EXPECTED,
                    "note": note or f"marked expected by @{actor.name}",
                    "created_by": actor.name,
                    "created_at": now,
                    "incident_id": incident.id,
                }
                for metric_id in ids
            ],
        )
    return len(ids)


def add_known_broken_keys(
    connection: Connection,
    incident: Incident,
    keys: Sequence[object],
    until: dt.datetime,
    actor: Actor,
    now: dt.datetime,
) -> int:
    """Store `keys` as known broken for the incident's check until `until`; returns how many."""
    connection.execute(
        known_broken_keys.insert(),
        [
            {
                "check_name": incident.check,
                "key": key_json(key),
                "expires_at": until,
                "created_by": actor.name,
                "created_at": now,
                "incident_id": incident.id,
            }
            for key in dict.fromkeys(keys)
        ],
    )
    return len(dict.fromkeys(keys))


def key_json(key: object) -> str:
    """A key as stored: one value, or a list of values for a key of several columns."""
    return json.dumps(list(key) if isinstance(key, tuple | list) else key, default=str)
