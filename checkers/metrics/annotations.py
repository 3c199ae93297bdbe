"""Annotations people put on metric points (dq_metric_annotations, written by triage's "this is
expected"): an expected point is normal. Anomaly detection trains on it even though it was
flagged, and accepts its value when it comes again."""

from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from checkers.engine_tables import metric_annotations, metrics_table

EXPECTED = "expected"


def expected_ids(connection: Connection, analyzer: str, source_table: str) -> set[int]:
    """Ids of the points of `analyzer` on `source_table` annotated as expected."""
    a, m = metric_annotations, metrics_table
    rows = connection.execute(
        sa.select(a.c.metric_id)
        .join(m, m.c.id == a.c.metric_id)
        .where(a.c.kind == EXPECTED, m.c.analyzer == analyzer, m.c.source_table == source_table)
    )
    return {int(i) for i in rows.scalars()}
