"""What the project database keeps for incremental checks: per (check, partition), the analyzer
states computed from the partition and the fingerprint of the data they came from. States are
written before the fingerprint, so a crash in between leaves a partition that is read again."""

from __future__ import annotations

import datetime as dt
import hashlib
import os
import shutil
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from checkers.engine_tables import partition_states, partitions
from checkers.metrics._analyzer import Analyzer, State
from checkers.metrics._serde import STATE_FORMAT_VERSION, StateFormatError, decode_state
from checkers.metrics.state_stores import (
    Record,
    _RecordStore,
    analyzer_key,
    record_from_row,
    state_row,
)
from checkers.project_db import utc_now


@dataclass(frozen=True)
class Known:
    """What is stored for one partition of a check."""

    fingerprint: str
    definition: str
    rows: int | None
    partition_ts: dt.datetime | None
    data_schema: str | None = None
    updated_at: dt.datetime | None = None


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


#: Seconds an unreferenced frequency table is kept (see CheckStateStore._prune).
TABLE_GRACE_S = 6 * 3600


class CheckStateStore(_RecordStore):
    """A StateStore over the project database: the `dataset` is the check's name. Saving a
    partition replaces all its states (an analyzer the check no longer has leaves no record)."""

    def __init__(self, engine: Engine, frequency_root: str | os.PathLike[str]) -> None:
        super().__init__(frequency_root)
        self.engine = engine

    def _write(self, dataset: str, partition: str, records: Mapping[str, Record]) -> None:
        now = utc_now()
        table = partition_states
        rows = [
            {
                "check_name": dataset,
                "partition_key": partition,
                "analyzer_digest": _digest(key),
                **state_row(key, record, now),
            }
            for key, record in records.items()
        ]
        where = (table.c.check_name == dataset, table.c.partition_key == partition)
        with self.engine.begin() as connection:
            connection.execute(table.delete().where(*where))
            if rows:
                connection.execute(table.insert(), rows)

    def _prune(self, dataset: str, partition: str) -> None:
        """Delete the partition's frequency tables that no stored state names and that are
        older than TABLE_GRACE_S: a younger one may be a concurrent run's, written but not yet
        saved, or replaced while that run still merges it."""
        directory = self._partition_dir(dataset, partition)
        if not directory.is_dir():
            return
        used = {
            Path(location).name
            for r in self._read(dataset, partition).values()
            if (location := _location(r["kind"], r["payload"]))
        }
        oldest = time.time() - TABLE_GRACE_S
        for child in directory.iterdir():
            stale = child.name not in used and child.stat().st_mtime < oldest
            if child.name.startswith("freq-") and stale:
                shutil.rmtree(child, ignore_errors=True)

    def _read(self, dataset: str, partition: str) -> dict[str, Record]:
        table = partition_states
        query = sa.select(table).where(
            table.c.check_name == dataset, table.c.partition_key == partition
        )
        with self.engine.connect() as connection:
            found = connection.execute(query).mappings().all()
        return {row["analyzer"]: record_from_row(dict(row)) for row in found}

    def partitions(self, dataset: str) -> list[str]:
        table = partition_states
        query = (
            sa.select(table.c.partition_key)
            .where(table.c.check_name == dataset)
            .distinct()
            .order_by(table.c.partition_key)
        )
        with self.engine.connect() as connection:
            return list(connection.execute(query).scalars())


@dataclass(frozen=True, eq=False)
class StoredTable:
    """A stored frequency state, not opened yet: the tables of all partitions are merged in one
    scan (checkers.metrics.frequencies.merge_stored) rather than opened one by one."""

    payload: dict[str, Any]


def _decoded(record: Record) -> object:
    if record["kind"] == "frequencies":
        if record.get("format_version") != STATE_FORMAT_VERSION:
            raise StateFormatError(f"frequency state of format {record.get('format_version')!r}")
        return StoredTable(record["payload"])
    return decode_state(record)


def _location(kind: str, payload: Mapping[str, Any]) -> str | None:
    """Where a frequency state's Parquet table lives (None for other states)."""
    location = payload.get("location") if kind == "frequencies" else None
    return str(location) if location else None


def _table_exists(record: Record) -> bool:
    """A frequency state's Parquet table is still there (else the partition is read again)."""
    location = _location(record["kind"], record["payload"])
    return location is None or "://" in location or os.path.isdir(location)


class PartitionStore:
    """The stored partitions of incremental checks: fingerprints in `dq_partitions`, states in
    `dq_partition_states`, frequency tables under `frequency_root`."""

    def __init__(self, engine: Engine, frequency_root: str | os.PathLike[str]) -> None:
        self.engine = engine
        self.states = CheckStateStore(engine, frequency_root)

    def known(self, check: str) -> dict[str, Known]:
        table = partitions
        query = sa.select(table).where(table.c.check_name == check)
        with self.engine.connect() as connection:
            rows = connection.execute(query).mappings().all()
        return {
            r["partition_key"]: Known(
                r["fingerprint"],
                r["definition"],
                r["rows"],
                r["partition_ts"],
                r["data_schema"],
                r["updated_at"],
            )
            for r in rows
        }

    def load(
        self, check: str, keys: Sequence[str], analyzers: Iterable[Analyzer]
    ) -> dict[str, dict[Analyzer, State]]:
        """The stored states of `analyzers` in each of `keys` (one query per 500 partitions). A
        state of another format version, or a frequency state whose table has gone missing, is
        left out: its partition is then read again."""
        wanted = {analyzer_key(a): a for a in analyzers}
        found: dict[str, dict[Analyzer, State]] = {k: {} for k in keys}
        table = partition_states
        with self.engine.connect() as connection:
            for chunk in range(0, len(keys), 500):
                query = sa.select(table).where(
                    table.c.check_name == check,
                    table.c.partition_key.in_(list(keys[chunk : chunk + 500])),
                )
                for row in connection.execute(query).mappings():
                    analyzer = wanted.get(row["analyzer"])
                    record = record_from_row(dict(row))
                    if analyzer is None or not _table_exists(record):
                        continue
                    try:
                        state = _decoded(record)
                    except StateFormatError:  # written by another version: read it again
                        continue
                    found[row["partition_key"]][analyzer] = state  # type: ignore[assignment]
        return found

    def save(
        self,
        check: str,
        partition: str,
        states: Mapping[Analyzer, State],
        *,
        fingerprint: str,
        definition: str,
        rows: int | None,
        partition_ts: dt.datetime | None,
        data_schema: str | None = None,
    ) -> None:
        """The partition's states, then its fingerprint (the commit point)."""
        self.states.save(check, partition, states)
        table = partitions
        with self.engine.begin() as connection:
            connection.execute(
                table.delete().where(
                    table.c.check_name == check, table.c.partition_key == partition
                )
            )
            connection.execute(
                table.insert().values(
                    check_name=check,
                    partition_key=partition,
                    fingerprint=fingerprint,
                    definition=definition,
                    rows=rows,
                    partition_ts=partition_ts,
                    data_schema=data_schema,
                    updated_at=utc_now(),
                )
            )

    def forget(self, check: str, keys: Iterable[str]) -> None:
        """Drop partitions: the fingerprint first (so a crash leaves them unknown), then the
        states and frequency tables."""
        keys = list(keys)
        if not keys:
            return
        with self.engine.begin() as connection:
            for table in (partitions, partition_states):
                connection.execute(
                    table.delete().where(
                        table.c.check_name == check, table.c.partition_key.in_(keys)
                    )
                )
        for key in keys:
            shutil.rmtree(self.states._partition_dir(check, key), ignore_errors=True)
