"""Where analyzer states live between runs: in memory, on a filesystem, or in a SQL database.

A store keeps, per (dataset, partition), one state per analyzer. All states of a partition are
written atomically, carry a format version, and frequency tables are kept as
Parquet next to them."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import threading
import uuid
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import quote

from sqlalchemy import create_engine, delete, select
from sqlalchemy.engine import Engine

from checkers.engine_tables import states_table
from checkers.metrics._analyzer import Analyzer, State
from checkers.metrics._serde import decode_state, encode_state
from checkers.metrics.frequencies import FrequencyState

Record = dict[str, Any]


def analyzer_key(analyzer: Analyzer) -> str:
    """A stable text key: the analyzer's class and parameters."""
    return repr(analyzer)


class StateStore(Protocol):
    """Keeps analyzer states per dataset partition."""

    def save(self, dataset: str, partition: str, states: Mapping[Analyzer, State]) -> None:
        """Store the states of one partition, replacing those of the same analyzers, atomically."""

    def load(self, dataset: str, partition: str, analyzer: Analyzer) -> State | None:
        """The stored state, or None when the partition has none for this analyzer."""

    def partitions(self, dataset: str) -> list[str]:
        """Partitions of the dataset that have stored states, sorted."""

    def frequency_location(self, dataset: str, partition: str) -> str:
        """A fresh directory for this partition's frequency tables (Parquet)."""


class _RecordStore:
    """Shared logic: encoding, persisting frequency tables, pruning unreferenced ones."""

    def __init__(self, frequency_root: str | os.PathLike[str]) -> None:
        self._frequency_root = Path(frequency_root)

    # Subclasses keep records: {analyzer key: encoded state}.
    def _write(self, dataset: str, partition: str, records: Mapping[str, Record]) -> None:
        raise NotImplementedError

    def _read(self, dataset: str, partition: str) -> dict[str, Record]:
        raise NotImplementedError

    def partitions(self, dataset: str) -> list[str]:
        raise NotImplementedError

    def _partition_dir(self, dataset: str, partition: str) -> Path:
        return self._frequency_root / quote(dataset, safe="") / quote(partition, safe="")

    def frequency_location(self, dataset: str, partition: str) -> str:
        return str(self._partition_dir(dataset, partition) / f"freq-{uuid.uuid4().hex}")

    def save(self, dataset: str, partition: str, states: Mapping[Analyzer, State]) -> None:
        records = {}
        for analyzer, state in states.items():
            if isinstance(state, FrequencyState) and state.location is None:
                if state.frequencies is None:
                    continue  # the empty table: nothing to keep
                state = state.written(self.frequency_location(dataset, partition))
            records[analyzer_key(analyzer)] = encode_state(state)
        self._write(dataset, partition, records)
        self._prune(dataset, partition)

    def load(self, dataset: str, partition: str, analyzer: Analyzer) -> State | None:
        record = self._read(dataset, partition).get(analyzer_key(analyzer))
        return None if record is None else decode_state(record)  # type: ignore[return-value]

    def load_many(
        self, dataset: str, partition: str, analyzers: Iterable[Analyzer]
    ) -> dict[Analyzer, State]:
        """Several analyzers' states of one partition in one read."""
        records = self._read(dataset, partition)
        found = {}
        for analyzer in analyzers:
            record = records.get(analyzer_key(analyzer))
            if record is not None:
                found[analyzer] = decode_state(record)
        return found  # type: ignore[return-value]

    def _prune(self, dataset: str, partition: str) -> None:
        """Delete frequency tables that no stored state of the partition refers to any more."""
        directory = self._partition_dir(dataset, partition)
        if not directory.is_dir():
            return
        used = {
            Path(r["payload"]["location"]).name
            for r in self._read(dataset, partition).values()
            if r.get("kind") == "frequencies"
        }
        for child in directory.iterdir():
            if child.name.startswith("freq-") and child.name not in used:
                shutil.rmtree(child, ignore_errors=True)


class InMemoryStateStore(_RecordStore):
    """States in this process (frequency tables in a temporary directory)."""

    def __init__(self, frequency_root: str | os.PathLike[str] | None = None) -> None:
        super().__init__(frequency_root or tempfile.mkdtemp(prefix="dq-states-"))
        self._records: dict[tuple[str, str], dict[str, Record]] = {}
        self._lock = threading.Lock()

    def _write(self, dataset: str, partition: str, records: Mapping[str, Record]) -> None:
        with self._lock:
            current = dict(self._records.get((dataset, partition), {}))
            current.update(records)
            self._records[(dataset, partition)] = current  # one swap: readers see all or nothing

    def _read(self, dataset: str, partition: str) -> dict[str, Record]:
        return self._records.get((dataset, partition), {})

    def partitions(self, dataset: str) -> list[str]:
        return sorted(p for d, p in self._records if d == dataset)


class FileStateStore(_RecordStore):
    """One directory per dataset partition: `states.json` plus Parquet frequency tables.

    Writes go to a temporary file renamed over the old one, so a crash never leaves half a file."""

    FILE = "states.json"

    def __init__(self, path: str | os.PathLike[str]) -> None:
        super().__init__(path)
        self.path = Path(path)

    def _write(self, dataset: str, partition: str, records: Mapping[str, Record]) -> None:
        directory = self._partition_dir(dataset, partition)
        directory.mkdir(parents=True, exist_ok=True)
        merged = {**self._read(dataset, partition), **records}
        body = {"dataset": dataset, "partition": partition, "states": merged}
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=".states-", suffix=".tmp")
        try:
            with os.fdopen(fd, "w") as handle:
                json.dump(body, handle)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(tmp, directory / self.FILE)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    def _read(self, dataset: str, partition: str) -> dict[str, Record]:
        file = self._partition_dir(dataset, partition) / self.FILE
        if not file.exists():
            return {}
        return json.loads(file.read_text())["states"]  # type: ignore[no-any-return]

    def partitions(self, dataset: str) -> list[str]:
        root = self.path / quote(dataset, safe="")
        if not root.is_dir():
            return []
        found = []
        for child in root.iterdir():
            file = child / self.FILE
            if file.exists():
                found.append(json.loads(file.read_text())["partition"])
        return sorted(found)


class SqlStateStore(_RecordStore):
    """States in a SQL database through SQLAlchemy (SQLite, PostgreSQL); frequency tables as
    Parquet under `frequency_root`. One transaction per saved partition."""

    def __init__(
        self, url: str | Engine, *, frequency_root: str | os.PathLike[str] = ".dq/states"
    ) -> None:
        super().__init__(frequency_root)
        self.engine = create_engine(url) if isinstance(url, str) else url
        self._schema_ready = False

    def _connect(self, *, write: bool) -> Any:
        """A connection (a transaction when writing); the table is created on first use."""
        if not self._schema_ready:
            states_table.create(self.engine, checkfirst=True)  # in the project DB: migration 9
            self._schema_ready = True
        return self.engine.begin() if write else self.engine.connect()

    def _write(self, dataset: str, partition: str, records: Mapping[str, Record]) -> None:
        now = datetime.now(UTC)
        with self._connect(write=True) as connection:
            connection.execute(
                delete(states_table).where(
                    states_table.c.dataset == dataset,
                    states_table.c.partition == partition,
                    states_table.c.analyzer.in_(list(records)),
                )
            )
            if records:
                connection.execute(
                    states_table.insert(),
                    [
                        {"dataset": dataset, "partition": partition, **state_row(key, record, now)}
                        for key, record in records.items()
                    ],
                )

    def _read(self, dataset: str, partition: str) -> dict[str, Record]:
        query = select(states_table).where(
            states_table.c.dataset == dataset, states_table.c.partition == partition
        )
        with self._connect(write=False) as connection:
            rows = connection.execute(query).mappings().all()
        return {row["analyzer"]: record_from_row(dict(row)) for row in rows}

    def partitions(self, dataset: str) -> list[str]:
        query = (
            select(states_table.c.partition)
            .where(states_table.c.dataset == dataset)
            .distinct()
            .order_by(states_table.c.partition)
        )
        with self._connect(write=False) as connection:
            return list(connection.execute(query).scalars())


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


def load_states(
    store: StateStore, analyzers: Iterable[Analyzer], *, dataset: str, partitions: Iterable[str]
) -> tuple[dict[Analyzer, State], dict[Analyzer, str]]:
    """Each analyzer's state merged over the partitions, or why it could not be (missing state)."""
    wanted = list(dict.fromkeys(analyzers))
    merged: dict[Analyzer, State] = {}
    missing: dict[Analyzer, str] = {}
    for partition in partitions:
        if isinstance(store, _RecordStore):
            found = store.load_many(dataset, partition, wanted)
        else:
            found = {a: s for a in wanted if (s := store.load(dataset, partition, a)) is not None}
        for analyzer in wanted:
            if analyzer in missing:
                continue
            state = found.get(analyzer)
            if state is None:
                missing[analyzer] = (
                    f"{analyzer!r}: no stored state for dataset {dataset!r} partition "
                    f"{partition!r}; run the analysis on that partition first"
                )
                merged.pop(analyzer, None)
            else:
                merged[analyzer] = merged[analyzer].merge(state) if analyzer in merged else state
    return merged, missing
