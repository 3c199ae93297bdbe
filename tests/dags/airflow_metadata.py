"""Reading an Airflow 3.3 metadata database directly (tables verified on 3.3.2): `dag_run`,
`task_instance` (the last try) and `task_instance_history` (earlier tries), `xcom` (`value` is a
JSON column holding what the task returned), `asset` + `asset_event`, `serialized_dag`,
`import_error`, and `job` for scheduler heartbeats. Timestamps come back as aware UTC datetimes."""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass

import sqlalchemy as sa

TERMINAL = frozenset({"success", "failed"})  # DagRun states a run ends in


@dataclass(frozen=True)
class DagRun:
    dag_id: str
    run_id: str
    state: str
    run_type: str  # scheduled, manual, asset_triggered, backfill
    logical_date: dt.datetime | None
    data_interval_start: dt.datetime | None
    data_interval_end: dt.datetime | None
    start_date: dt.datetime | None
    end_date: dt.datetime | None

    @property
    def seconds(self) -> float | None:
        """From the run's start to its end (None while it runs)."""
        if self.start_date is None or self.end_date is None:
            return None
        return (self.end_date - self.start_date).total_seconds()


@dataclass(frozen=True)
class TaskInstance:
    task_id: str
    map_index: int  # -1 unless mapped
    state: str | None
    try_number: int
    max_tries: int
    rendered_map_index: str | None
    start_date: dt.datetime | None
    end_date: dt.datetime | None


@dataclass(frozen=True)
class AssetEvent:
    name: str
    uri: str
    extra: dict[str, object]
    source_dag_id: str | None
    source_task_id: str | None
    source_run_id: str | None
    source_map_index: int | None
    timestamp: dt.datetime


def _time(value: object) -> dt.datetime | None:
    """SQLite returns text; Airflow stores UTC."""
    if value is None:
        return None
    moment = value if isinstance(value, dt.datetime) else dt.datetime.fromisoformat(str(value))
    return moment if moment.tzinfo else moment.replace(tzinfo=dt.UTC)


def _json(value: object) -> object:
    return json.loads(value) if isinstance(value, str | bytes) else value


_TI_COLUMNS = (
    "task_id, map_index, state, try_number, max_tries, rendered_map_index, start_date, end_date"
)


def _task_instance(row: sa.Row) -> TaskInstance:
    return TaskInstance(
        row[0], row[1], row[2], row[3], row[4], row[5], _time(row[6]), _time(row[7])
    )


class MetadataReader:
    """Read-only queries on the metadata database at `url`."""

    def __init__(self, url: str) -> None:
        args = {"timeout": 30} if url.startswith("sqlite") else {}
        self.engine = sa.create_engine(url, connect_args=args)

    def dispose(self) -> None:
        self.engine.dispose()

    def _rows(self, sql: str, **params: object) -> list[sa.Row]:
        with self.engine.connect() as connection:
            return list(connection.execute(sa.text(sql), params))

    def scheduler_alive(self) -> bool:
        return bool(
            self._rows(
                "SELECT 1 FROM job WHERE job_type = 'SchedulerJob' AND state = 'running' "
                "AND latest_heartbeat IS NOT NULL"
            )
        )

    def serialized_dag_ids(self) -> set[str]:
        return {r[0] for r in self._rows("SELECT DISTINCT dag_id FROM serialized_dag")}

    def import_errors(self) -> dict[str, str]:
        return {r[0]: r[1] for r in self._rows("SELECT filename, stacktrace FROM import_error")}

    def dag_runs(self, dag_id: str) -> list[DagRun]:
        rows = self._rows(
            "SELECT dag_id, run_id, state, run_type, logical_date, data_interval_start, "
            "data_interval_end, start_date, end_date FROM dag_run WHERE dag_id = :dag_id "
            "ORDER BY id",
            dag_id=dag_id,
        )
        return [DagRun(r[0], r[1], r[2], r[3], *(_time(v) for v in r[4:])) for r in rows]

    def task_instances(self, dag_id: str, run_id: str) -> dict[tuple[str, int], TaskInstance]:
        rows = self._rows(
            f"SELECT {_TI_COLUMNS} FROM task_instance WHERE dag_id = :dag_id AND run_id = :run_id",
            dag_id=dag_id,
            run_id=run_id,
        )
        return {(r[0], r[1]): _task_instance(r) for r in rows}

    def task_tries(self, dag_id: str, run_id: str) -> list[TaskInstance]:
        earlier = self._rows(
            f"SELECT {_TI_COLUMNS} FROM task_instance_history "
            "WHERE dag_id = :dag_id AND run_id = :run_id",
            dag_id=dag_id,
            run_id=run_id,
        )
        tries = [_task_instance(r) for r in earlier]
        tries += self.task_instances(dag_id, run_id).values()
        return sorted(tries, key=lambda t: (t.task_id, t.map_index, t.try_number))

    def xcom(self, dag_id: str, run_id: str, task_id: str, *, key: str, map_index: int) -> object:
        rows = self._rows(
            "SELECT value FROM xcom WHERE dag_id = :dag_id AND run_id = :run_id "
            "AND task_id = :task_id AND key = :key AND map_index = :map_index",
            dag_id=dag_id,
            run_id=run_id,
            task_id=task_id,
            key=key,
            map_index=map_index,
        )
        if not rows:
            raise KeyError(f"no XCom {key!r} of {dag_id}.{task_id}[{map_index}] in {run_id}")
        return _json(rows[0][0])

    def asset_events(self, *, name: str | None = None, uri: str | None = None) -> list[AssetEvent]:
        rows = self._rows(
            "SELECT a.name, a.uri, e.extra, e.source_dag_id, e.source_task_id, e.source_run_id, "
            "e.source_map_index, e.timestamp FROM asset_event e JOIN asset a ON a.id = e.asset_id "
            "WHERE (:name IS NULL OR a.name = :name) AND (:uri IS NULL OR a.uri = :uri) "
            "ORDER BY e.id",
            name=name,
            uri=uri,
        )
        return [
            AssetEvent(r[0], r[1], _json(r[2]) or {}, r[3], r[4], r[5], r[6], _time(r[7]))  # type: ignore[arg-type]
            for r in rows
        ]
