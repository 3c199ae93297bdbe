"""What "this is expected" leaves behind for later runs: an annotation on the metric points the
incident's run flagged (anomaly detection trains on them and accepts their values), and, when
asked, the failing keys as known broken for the check until a time. The tables are the engine's
(checkers.engine_tables): the checkers read them when they judge."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Sequence

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from alerting.model import Incident
from alerting.tables import runs
from alerting.triage.values import Actor
from checkers.engine_tables import known_broken_keys, metric_annotations, metrics_table

EXPECTED = "expected"
#: The keys of a MetricChecker's sample row: one failing constraint and the metric it judged.
FLAGGED_METRIC = {"constraint", "metric", "instance", "value", "reason"}


def annotate_run_metrics(
    connection: Connection, incident: Incident, actor: Actor, note: str, now: dt.datetime
) -> int:
    """Annotate as expected the metric points the incident's latest run flagged (its failing
    constraints, as the outcome lists them); returns how many. A row check, or a database
    without metric history, has none."""
    if not sa.inspect(connection).has_table(metrics_table.name):
        return 0
    run_id = connection.execute(
        sa.select(sa.func.max(runs.c.id)).where(runs.c.check_name == incident.check)
    ).scalar()
    t = metrics_table
    ids = []
    for flagged in incident.last_outcome.sample:
        if not set(flagged) >= FLAGGED_METRIC or not isinstance(flagged["value"], int | float):
            continue  # a row check's sample row, or a metric without a number
        found = connection.execute(
            sa.select(sa.func.max(t.c.id)).where(
                t.c.constraint_name == flagged["constraint"],
                t.c.constraint_status == "Failure",
                t.c.name == flagged["metric"],
                t.c.instance == flagged["instance"],
                t.c.value == float(flagged["value"]),
            )
        ).scalar()
        if found is not None:
            ids.append(int(found))
    rows = [
        {
            "metric_id": metric_id,
            "kind": EXPECTED,
            "note": note or f"marked expected by @{actor.name}",
            "created_by": actor.name,
            "created_at": now,
            "incident_id": incident.id,
            "run_id": run_id,
        }
        for metric_id in dict.fromkeys(ids)
    ]
    if rows:
        connection.execute(metric_annotations.insert(), rows)
    return len(rows)


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
