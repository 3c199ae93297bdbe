"""The metrics engine's tables in the project database: metric history (`dq_metrics`), the
engine's states (`dq_states`), the partitions and states of incremental checks, annotations on
metric points and periods (triage, `dq history annotate`), known-broken keys and the schemas
schema checks saw at their previous run; with their migration steps. Beside checkers.metrics
rather than in it: the database opens without Spark.

History and engine states were created on first use before migration 9 (MetricsRepository and
SqlStateStore still do so on a database of their own); migration 9 creates them only when
missing, so a database that has them keeps every row."""

from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from checkers.project_db import LongText, Migration, UtcDateTime
from checkers.project_db.ddl import add_missing_columns

metadata = sa.MetaData()

#: Wikimedia's data model: one row per metric (see checkers/metrics/repository.py).
metrics_table = sa.Table(
    "dq_metrics",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("source_table", sa.String(300), nullable=False),
    sa.Column("dataset_time", sa.DateTime(timezone=True), nullable=False),
    sa.Column("entity", sa.String(20), nullable=False),
    sa.Column("instance", sa.String(500), nullable=False),
    sa.Column("name", sa.String(100), nullable=False),
    sa.Column("analyzer", sa.Text, nullable=False),
    sa.Column("value", sa.Float(precision=53)),  # numbers; NULL for distributions
    sa.Column("value_json", sa.Text),  # distributions, exactly as computed
    sa.Column("pipeline_run_id", sa.String(200)),
    sa.Column("partition_id", sa.String(200)),
    sa.Column("partition_ts", sa.DateTime(timezone=True)),
    sa.Column("tags", sa.Text, nullable=False),  # JSON object
    sa.Column("check_name", sa.String(300)),
    sa.Column("check_status", sa.String(20)),
    sa.Column("constraint_name", sa.String(500)),
    sa.Column("constraint_status", sa.String(20)),
    # where the value came from: scan, metadata or states (migration 12; NULL before it)
    sa.Column("source", sa.String(16)),
    sa.Index("ix_dq_metrics_source_time", "source_table", "dataset_time"),
    sa.Index("ix_dq_metrics_analyzer_time", "analyzer", "dataset_time"),
)

#: Analyzer states per (dataset, partition) of checkers.metrics.SqlStateStore.
states_table = sa.Table(
    "dq_states",
    metadata,
    sa.Column("dataset", sa.String(255), primary_key=True),
    sa.Column("partition", sa.String(255), primary_key=True),
    sa.Column("analyzer", sa.String(1000), primary_key=True),
    sa.Column("format_version", sa.String(16), nullable=False),
    sa.Column("kind", sa.String(64), nullable=False),
    sa.Column("payload", sa.Text, nullable=False),
    sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
)

# Incremental checks (scheduling/tick/incremental.py), migration 7. Per (check, partition): the
# fingerprint of the data whose states are stored and the check definition they were computed
# under; written after the states, so a crash in between only means recomputing the partition.
partitions = sa.Table(
    "dq_partitions",
    metadata,
    sa.Column("check_name", sa.String(200), primary_key=True),
    sa.Column("partition_key", sa.String(400), primary_key=True),
    sa.Column("fingerprint", sa.String(64), nullable=False),
    sa.Column("definition", sa.String(64), nullable=False),
    sa.Column("rows", sa.BigInteger),
    sa.Column("partition_ts", UtcDateTime),
    sa.Column("data_schema", sa.Text),  # the source's schema (JSON): no read when nothing changed
    sa.Column("updated_at", UtcDateTime, nullable=False),
)

#: One analyzer state per (check, partition); the analyzer's text key is hashed for the primary
#: key (MariaDB limits key length). Frequency tables live as Parquet under DQ_STATE_DIR.
partition_states = sa.Table(
    "dq_partition_states",
    metadata,
    sa.Column("check_name", sa.String(200), primary_key=True),
    sa.Column("partition_key", sa.String(400), primary_key=True),
    sa.Column("analyzer_digest", sa.String(64), primary_key=True),
    sa.Column("analyzer", sa.Text, nullable=False),
    sa.Column("format_version", sa.String(16), nullable=False),
    sa.Column("kind", sa.String(64), nullable=False),
    sa.Column("payload", LongText, nullable=False),
    sa.Column("updated_at", UtcDateTime, nullable=False),
)


#: Notes people put on metric points (migration 10): "expected" marks a flagged run's points as
#: normal, so anomaly detection trains on them and accepts their values (alerting.triage).
metric_annotations = sa.Table(
    "dq_metric_annotations",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("metric_id", sa.Integer, nullable=False),  # dq_metrics.id
    sa.Column("kind", sa.String(20), nullable=False),  # expected
    sa.Column("note", sa.Text, nullable=False),
    sa.Column("created_by", sa.String(200), nullable=False),
    sa.Column("created_at", UtcDateTime, nullable=False),
    sa.Column("incident_id", sa.Integer),
    sa.Column("run_id", sa.Integer),  # dq_runs.id of the run whose points these are
    sa.Index("ix_dq_metric_annotations_metric", "metric_id"),
    sa.Index("ix_dq_metric_annotations_run", "run_id"),
)

#: Periods people annotated on a check's metric history (migration 11, `dq history annotate`):
#: `expected` and `exclude` over [starts_at, ends_at), `baseline` from starts_at (no end).
metric_periods = sa.Table(
    "dq_metric_periods",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("check_name", sa.String(200), nullable=False),
    sa.Column("kind", sa.String(20), nullable=False),  # expected | exclude | baseline
    sa.Column("starts_at", UtcDateTime, nullable=False),
    sa.Column("ends_at", UtcDateTime),
    sa.Column("note", sa.Text, nullable=False),
    sa.Column("created_by", sa.String(200), nullable=False),
    sa.Column("created_at", UtcDateTime, nullable=False),
    sa.Index("ix_dq_metric_periods_check", "check_name"),
)

#: Keys a person said are known broken for a while (migration 10): excused at judge time, like
#: a check's own KnownBroken keys, until `expires_at`. `key` is the key as JSON.
known_broken_keys = sa.Table(
    "dq_known_broken_keys",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("check_name", sa.String(200), nullable=False),
    sa.Column("key", sa.Text, nullable=False),
    sa.Column("expires_at", UtcDateTime, nullable=False),
    sa.Column("created_by", sa.String(200), nullable=False),
    sa.Column("created_at", UtcDateTime, nullable=False),
    sa.Column("incident_id", sa.Integer),
    sa.Index("ix_dq_known_broken_keys_check", "check_name", "expires_at"),
)


#: The schema each SchemaChecker without a baseline saw at its latest run (migration 14), per
#: series (the check's name): the next run compares with it. `data_schema` is Spark's JSON.
recorded_schemas = sa.Table(
    "dq_schemas",
    metadata,
    sa.Column("series", sa.String(200), primary_key=True),
    sa.Column("data_schema", sa.Text, nullable=False),
    sa.Column("recorded_at", UtcDateTime, nullable=False),
)


def _v7_partitions(connection: Connection) -> None:
    partitions.create(connection, checkfirst=True)
    partition_states.create(connection, checkfirst=True)


def _v9_history_and_states(connection: Connection) -> None:
    # Their keys pass MariaDB's 3,072 bytes (utf8mb4): there they stay unavailable, as before.
    if connection.dialect.name in ("mysql", "mariadb"):
        return
    metrics_table.create(connection, checkfirst=True)
    states_table.create(connection, checkfirst=True)


def _v10_annotations(connection: Connection) -> None:
    metric_annotations.create(connection, checkfirst=True)
    known_broken_keys.create(connection, checkfirst=True)


def _v11_periods(connection: Connection) -> None:
    metric_periods.create(connection, checkfirst=True)


def _v12_metric_source(connection: Connection) -> None:
    """Metric history says where each value came from (lakehouse: metrics from metadata)."""
    if sa.inspect(connection).has_table(metrics_table.name):  # none on MariaDB (see 9)
        add_missing_columns(connection, metrics_table, ["source"])


def _v14_recorded_schemas(connection: Connection) -> None:
    """Schema checks against the previous run (lakehouse: schema changes)."""
    recorded_schemas.create(connection, checkfirst=True)


MIGRATIONS = [
    Migration(7, "checkers.metrics", _v7_partitions),
    Migration(9, "checkers.metrics", _v9_history_and_states),
    Migration(10, "checkers.metrics", _v10_annotations),
    Migration(11, "checkers.metrics", _v11_periods),
    Migration(12, "checkers.metrics", _v12_metric_source),
    Migration(14, "checkers.metrics", _v14_recorded_schemas),
]
