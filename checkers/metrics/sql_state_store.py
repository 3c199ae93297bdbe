"""Analyzer states in a SQL database through SQLAlchemy (SQLite, PostgreSQL, MariaDB): in the
engine's own `dq_states` table, or in any table of the same shape named by a `StateTable` (the
project database keeps incremental checks' states in `dq_partition_states`)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    Table,
    create_engine,
    delete,
    select,
)
from sqlalchemy.engine import Connection, Engine

from checkers.engine_tables import states_table
from checkers.metrics.state_stores import Record, RecordStore


@dataclass(frozen=True)
class StateTable:
    """A table of states and the names of its key columns. With `digest`, rows are keyed by the
    SHA-256 of the analyzer's key in that column (MariaDB limits the length of keys). The store
    creates the table on first use when `create`; otherwise the project's migrations do."""

    table: Table
    dataset: str = "dataset"
    partition: str = "partition"
    digest: str | None = None
    create: bool = False


STATES = StateTable(states_table, create=True)

#: Partitions per query when loading many (databases limit the parameters of a statement).
_CHUNK = 500


class SqlStateStore(RecordStore):
    """States in a SQL database; frequency tables as Parquet under `frequency_root`. One
    transaction per saved partition. With `whole_partitions`, saving a partition replaces all
    its states (an analyzer no longer asked for leaves no record), not only the same analyzers'."""

    def __init__(
        self,
        url: str | Engine,
        *,
        frequency_root: str | os.PathLike[str] = ".dq/states",
        table: StateTable = STATES,
        whole_partitions: bool = False,
        table_grace_s: float = 0,
    ) -> None:
        super().__init__(frequency_root, table_grace_s=table_grace_s)
        self.engine = create_engine(url) if isinstance(url, str) else url
        self.layout = table
        self.whole_partitions = whole_partitions
        self._schema_ready = not table.create

    def _connect(self, *, write: bool) -> Any:
        """A connection (a transaction when writing); the table is created on first use."""
        if not self._schema_ready:
            self.layout.table.metadata.create_all(self.engine, tables=[self.layout.table])
            self._schema_ready = True
        return self.engine.begin() if write else self.engine.connect()

    def _where(self, dataset: str, partitions: Iterable[str]) -> list[Any]:
        table, layout = self.layout.table, self.layout
        return [table.c[layout.dataset] == dataset, table.c[layout.partition].in_(list(partitions))]

    def _write(self, dataset: str, partition: str, records: Mapping[str, Record]) -> None:
        table, layout = self.layout.table, self.layout
        now = datetime.now(UTC)
        where = self._where(dataset, [partition])
        if not self.whole_partitions and layout.digest:
            where.append(table.c[layout.digest].in_([_digest(k) for k in records]))
        elif not self.whole_partitions:
            where.append(table.c.analyzer.in_(list(records)))
        rows = [
            {
                layout.dataset: dataset,
                layout.partition: partition,
                **({layout.digest: _digest(key)} if layout.digest else {}),
                **state_row(key, record, now),
            }
            for key, record in records.items()
        ]
        with self._connect(write=True) as connection:
            connection.execute(delete(table).where(*where))
            if rows:
                connection.execute(table.insert(), rows)

    def _read(self, dataset: str, partition: str) -> dict[str, Record]:
        return self._read_many(dataset, [partition])[partition]

    def _read_many(
        self, dataset: str, partitions: Sequence[str] | None
    ) -> dict[str, dict[str, Record]]:
        """Every partition's records, in one query per _CHUNK partitions."""
        table, layout = self.layout.table, self.layout
        found: dict[str, dict[str, Record]] = {p: {} for p in partitions or ()}
        with self._connect(write=False) as connection:
            if partitions is None:
                query = select(table).where(table.c[layout.dataset] == dataset)
                self._collect(connection, query, found)
                return dict(sorted(found.items()))
            for start in range(0, len(partitions), _CHUNK):
                chunk = partitions[start : start + _CHUNK]
                self._collect(connection, select(table).where(*self._where(dataset, chunk)), found)
        return found

    def _collect(
        self, connection: Connection, query: Any, found: dict[str, dict[str, Record]]
    ) -> None:
        for row in connection.execute(query).mappings():
            partition = found.setdefault(row[self.layout.partition], {})
            partition[row["analyzer"]] = record_from_row(dict(row))

    def partitions(self, dataset: str) -> list[str]:
        column = self.layout.table.c[self.layout.partition]
        query = (
            select(column)
            .where(self.layout.table.c[self.layout.dataset] == dataset)
            .distinct()
            .order_by(column)
        )
        with self._connect(write=False) as connection:
            return list(connection.execute(query).scalars())

    def forget(self, dataset: str, partitions: Iterable[str]) -> None:
        """Drop the partitions' states (one transaction), then their frequency tables."""
        partitions = list(partitions)
        if not partitions:
            return
        with self._connect(write=True) as connection:
            connection.execute(delete(self.layout.table).where(*self._where(dataset, partitions)))
        for partition in partitions:
            shutil.rmtree(self._partition_dir(dataset, partition), ignore_errors=True)


def _digest(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def state_row(key: str, record: Record, now: datetime) -> dict[str, Any]:
    """The columns of one stored state, as SQL stores keep it."""
    return {
        "analyzer": key,
        "format_version": str(record["format_version"]),
        "kind": record["kind"],
        "payload": json.dumps(record["payload"]),
        "updated_at": now,
    }


def record_from_row(row: Mapping[str, Any]) -> Record:
    """A stored state's record, back from its SQL row."""
    version: Any = row["format_version"]
    return {
        "format_version": int(version) if str(version).isdigit() else version,
        "kind": row["kind"],
        "payload": json.loads(row["payload"]),
    }
