"""The metrics repository (SQLAlchemy; SQLite by default, PostgreSQL in production), in
Wikimedia's data model: one row per metric with entity, instance, name, value, dataset time,
source table, pipeline run, partition and tags; distributions (histograms, quantile sets, type
counts) as JSON; and the status of the constraint and check that used the metric."""

from __future__ import annotations

import datetime as dt
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from checkers.engine_tables import metric_annotations, metric_periods, metrics_table
from checkers.metrics._analyzer import Analyzer
from checkers.metrics._metric import Metric, MetricValue
from checkers.metrics.annotations import SeriesPoint, expected_ids
from checkers.metrics.state_stores import analyzer_key
from checkers.project_db.ddl import add_missing_columns

if TYPE_CHECKING:
    from checkers.metrics.verification import VerificationResult


#: What a verification run adds to a metric a constraint used (NULL for the others).
CONSTRAINT_COLUMNS = ("check_name", "check_status", "constraint_name", "constraint_status")


#: The tag of a segment's metrics (`MetricChecker(segment_by=...)`): its label, `carrier=UA`.
SEGMENT_TAG = "dq_segment"


@dataclass(frozen=True)
class ResultKey:
    """When the data is from (not when it was checked), and free-form tags."""

    dataset_time: dt.datetime
    tags: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class MetricRecord:
    source_table: str
    dataset_time: dt.datetime
    entity: str
    instance: str
    name: str
    analyzer: str
    value: MetricValue
    tags: dict[str, str]
    pipeline_run_id: str | None = None
    partition_id: str | None = None
    partition_ts: dt.datetime | None = None
    check_name: str | None = None
    check_status: str | None = None
    constraint_name: str | None = None
    constraint_status: str | None = None
    id: int | None = None  # the row's id in dq_metrics
    source: str | None = None  # scan, metadata or states (None: recorded before it was kept)
    expected: bool = False  # annotated "expected" by a person (checkers.metrics.annotations)


def _utc(value: dt.datetime | None) -> dt.datetime | None:
    if value is None:
        return None
    return value.replace(tzinfo=dt.UTC) if value.tzinfo is None else value.astimezone(dt.UTC)


class MetricsRepository:
    """`save` a run's metrics under a ResultKey; `query` them back by source, time range, tags
    and metric; `history` feeds anomaly detection; `delete_older_than` applies retention."""

    def __init__(self, url: str | Engine) -> None:
        self.engine = sa.create_engine(url) if isinstance(url, str) else url
        metrics_table.create(self.engine, checkfirst=True)  # in the project DB: migration 9
        metric_annotations.create(self.engine, checkfirst=True)  # and migration 10
        metric_periods.create(self.engine, checkfirst=True)  # and migration 11
        with self.engine.begin() as connection:  # and 12, for a history of its own
            add_missing_columns(connection, metrics_table, ["source"])

    def save(
        self,
        key: ResultKey,
        metrics: Iterable[Metric] | VerificationResult,
        *,
        source_table: str,
        pipeline_run_id: str | None = None,
        partition_id: str | None = None,
        partition_ts: dt.datetime | None = None,
    ) -> int:
        """Store the successful metrics (failed ones have no value to keep); returns how many.
        With `partition_id` the rows are one partition's metrics (per-partition history);
        without, the whole dataset's."""
        usage = _constraint_usage(metrics, per_partition=partition_id is not None)
        values = metrics.metrics.values() if hasattr(metrics, "metrics") else metrics
        rows = []
        for metric in values:
            if not metric.ok:
                continue
            number = metric.value if isinstance(metric.value, int | float) else None
            rows.append(
                {
                    "source_table": source_table,
                    "dataset_time": key.dataset_time,
                    "entity": metric.entity.value,
                    "instance": metric.instance,
                    "name": metric.name,
                    "analyzer": analyzer_key(metric.analyzer),
                    "value": float(number) if number is not None else None,
                    "value_json": None
                    if number is not None
                    else json.dumps(metric.value, sort_keys=True),
                    "pipeline_run_id": pipeline_run_id,
                    "partition_id": partition_id,
                    "partition_ts": partition_ts,
                    "tags": json.dumps(dict(key.tags), sort_keys=True),
                    "source": metric.source.value,
                    # every row names every column: one insert of many rows takes the first
                    # row's columns, so a metric no constraint used must still name these
                    **dict.fromkeys(CONSTRAINT_COLUMNS),
                    **usage.get(metric.analyzer, {}),
                }
            )
        if rows:
            with self.engine.begin() as connection:
                connection.execute(metrics_table.insert(), rows)
        return len(rows)

    def query(
        self,
        *,
        source_table: str | None = None,
        after: dt.datetime | None = None,
        before: dt.datetime | None = None,
        tags: Mapping[str, str] | None = None,
        names: Sequence[str] | None = None,
        instance: str | None = None,
        analyzer: Analyzer | None = None,
        per_partition: bool | None = None,
    ) -> list[MetricRecord]:
        """Records ordered by dataset time; `after` and `before` are inclusive; `tags` must all
        match (a subset). `per_partition`: None for every row, False for whole-dataset rows
        only (no partition id), True for per-partition rows only."""
        statement = _select(
            source_table=source_table,
            after=after,
            before=before,
            names=names,
            instance=instance,
            analyzer=analyzer,
            per_partition=per_partition,
        )
        return self._fetch(statement, tags)

    def history(
        self,
        analyzer: Analyzer,
        *,
        source_table: str,
        before: dt.datetime,
        tags: Mapping[str, str] | None = None,
        exclude_failed: bool = True,
        per_partition: bool = False,
        exclude_partition: str | None = None,
    ) -> list[tuple[dt.datetime, float]]:
        """Numeric values of `analyzer` strictly before `before`, one per dataset time (the
        latest save wins); with `exclude_failed`, runs whose constraint on this metric failed
        (an anomaly flagged, a bound broken) are left out. With `per_partition`, one value per
        partition instead (see `series`)."""
        return [
            (time, value)
            for time, value, failed in self.series(
                analyzer,
                source_table=source_table,
                before=before,
                tags=tags,
                per_partition=per_partition,
                exclude_partition=exclude_partition,
            )
            if not (exclude_failed and failed)
        ]

    def series(
        self,
        analyzer: Analyzer,
        *,
        source_table: str,
        before: dt.datetime,
        tags: Mapping[str, str] | None = None,
        per_partition: bool = False,
        exclude_partition: str | None = None,
    ) -> list[tuple[dt.datetime, float, bool]]:
        """Like `history`, keeping every run with a flag saying whether it failed (a point a
        person annotated as expected did not). Whole-dataset rows only, unless `per_partition`:
        then one point per partition id (its latest save wins, `exclude_partition` left out),
        timed by its partition time (else its dataset time), strictly before `before`."""
        return [
            (r.partition_ts or r.dataset_time if per_partition else r.dataset_time, value, failed)
            for r, value, failed in self._points(
                analyzer,
                source_table=source_table,
                before=before,
                tags=tags,
                per_partition=per_partition,
                exclude_partition=exclude_partition,
            )
        ]

    def annotated_series(
        self,
        analyzer: Analyzer,
        *,
        source_table: str,
        before: dt.datetime,
        tags: Mapping[str, str] | None = None,
        per_partition: bool = False,
        exclude_partition: str | None = None,
    ) -> list[SeriesPoint]:
        """The points of `series`, each saying whether a person annotated it as expected."""
        timed = (lambda r: r.partition_ts or r.dataset_time) if per_partition else None
        return [
            SeriesPoint(
                timed(record) if timed else record.dataset_time, value, failed, record.expected
            )
            for record, value, failed in self._points(
                analyzer,
                source_table=source_table,
                before=before,
                tags=tags,
                per_partition=per_partition,
                exclude_partition=exclude_partition,
            )
        ]

    def _points(
        self,
        analyzer: Analyzer,
        *,
        source_table: str,
        before: dt.datetime,
        tags: Mapping[str, str] | None,
        per_partition: bool,
        exclude_partition: str | None,
    ) -> list[tuple[MetricRecord, float, bool]]:
        """(record, value, failed) of each point of `series`, in time order."""
        statement = _select(
            source_table=source_table, analyzer=analyzer, per_partition=per_partition
        )
        points: dict[object, tuple[dt.datetime, MetricRecord]] = {}
        if per_partition:  # latest save = highest id, whatever times it carries
            records = self._fetch(statement.order_by(None).order_by(metrics_table.c.id), tags)
            for record in records:
                if record.partition_id != exclude_partition and isinstance(record.value, float):
                    points[record.partition_id] = (
                        record.partition_ts or record.dataset_time,
                        record,
                    )
        else:
            for record in self._fetch(statement, tags):
                if isinstance(record.value, float):
                    points[record.dataset_time] = (record.dataset_time, record)
        with self.engine.connect() as connection:
            expected = expected_ids(connection, analyzer_key(analyzer), source_table)
        found = []
        for time, record in sorted(points.values(), key=lambda p: (p[0], p[1].id or 0)):
            value = float(record.value)  # type: ignore[arg-type]
            if time < before and math.isfinite(value):
                record = replace(record, expected=record.id in expected)
                failed = record.constraint_status == "Failure" and not record.expected
                found.append((record, value, failed))
        return found

    def _fetch(self, statement: sa.Select, tags: Mapping[str, str] | None) -> list[MetricRecord]:
        with self.engine.connect() as connection:
            rows = connection.execute(statement).mappings().all()
        wanted = dict(tags or {})
        records = [_record(dict(r)) for r in rows]
        # A segment's records answer only a query for that segment, never the whole dataset's.
        return [
            r
            for r in records
            if all(r.tags.get(k) == v for k, v in wanted.items())
            and (SEGMENT_TAG in wanted or SEGMENT_TAG not in r.tags)
        ]

    def to_pandas(self, **filters: Any):
        """Query results as a pandas DataFrame, one column per tag (for dashboards)."""
        import pandas as pd

        records = self.query(**filters)
        rows = []
        for r in records:
            row = {k: v for k, v in r.__dict__.items() if k != "tags"}
            row.update({f"tag_{k}": v for k, v in r.tags.items()})
            rows.append(row)
        return pd.DataFrame(rows)

    def delete_older_than(
        self, days: float, *, now: dt.datetime, source_table: str | None = None
    ) -> int:
        """Retention: delete metrics (of one source, or all) whose dataset time is more than
        `days` before `now`; returns how many rows went."""
        cutoff = now - dt.timedelta(days=days)
        statement = metrics_table.delete().where(metrics_table.c.dataset_time < cutoff)
        if source_table is not None:
            statement = statement.where(metrics_table.c.source_table == source_table)
        with self.engine.begin() as connection:
            result = connection.execute(statement)
        return int(result.rowcount or 0)


def _select(
    *,
    source_table: str | None = None,
    after: dt.datetime | None = None,
    before: dt.datetime | None = None,
    names: Sequence[str] | None = None,
    instance: str | None = None,
    analyzer: Analyzer | None = None,
    per_partition: bool | None = None,
) -> sa.Select:
    t = metrics_table
    query = sa.select(t).order_by(t.c.dataset_time, t.c.id)
    if source_table is not None:
        query = query.where(t.c.source_table == source_table)
    if after is not None:
        query = query.where(t.c.dataset_time >= after)
    if before is not None:
        query = query.where(t.c.dataset_time <= before)
    if names:
        query = query.where(t.c.name.in_(list(names)))
    if instance is not None:
        query = query.where(t.c.instance == instance)
    if analyzer is not None:
        query = query.where(t.c.analyzer == analyzer_key(analyzer))
    if per_partition is not None:
        column = t.c.partition_id
        query = query.where(column.is_not(None) if per_partition else column.is_(None))
    return query


def _record(row: Mapping[str, Any]) -> MetricRecord:
    value = row["value"] if row["value_json"] is None else json.loads(row["value_json"])
    return MetricRecord(
        source_table=row["source_table"],
        dataset_time=_utc(row["dataset_time"]),  # type: ignore[arg-type]
        entity=row["entity"],
        instance=row["instance"],
        name=row["name"],
        analyzer=row["analyzer"],
        value=value,
        tags=json.loads(row["tags"]),
        pipeline_run_id=row["pipeline_run_id"],
        partition_id=row["partition_id"],
        partition_ts=_utc(row["partition_ts"]),
        check_name=row["check_name"],
        check_status=row["check_status"],
        constraint_name=row["constraint_name"],
        constraint_status=row["constraint_status"],
        id=row["id"],
        source=row.get("source"),
    )


def _constraint_usage(metrics: object, *, per_partition: bool) -> dict[Analyzer, dict[str, str]]:
    """For a verification result: the check and constraint that used each metric. A partition's
    rows carry the verdicts of per-partition anomaly constraints, whole-dataset rows the rest."""
    usage: dict[Analyzer, dict[str, str]] = {}
    for check in getattr(metrics, "check_results", []):
        for result in check.constraint_results:
            if getattr(result.constraint.anomaly, "per_partition", False) != per_partition:
                continue
            if usage.get(result.constraint.analyzer, {}).get("constraint_status") == "Failure":
                continue  # a metric used by several constraints keeps the failure
            usage[result.constraint.analyzer] = {
                "check_name": check.check.description,
                "check_status": check.status.value,
                "constraint_name": result.constraint.name,
                "constraint_status": result.status.value,
            }
    return usage
