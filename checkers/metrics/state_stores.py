"""Where analyzer states live between runs: the `StateStore` protocol, and stores in memory and
on a filesystem (the SQL store is in sql_state_store.py).

A store keeps, per (dataset, partition), one state per analyzer. All states of a partition are
written atomically, carry a format version, and frequency tables are kept as Parquet next to
them."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import threading
import time
import uuid
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol, cast, runtime_checkable
from urllib.parse import quote

from checkers.metrics._analyzer import Analyzer, State
from checkers.metrics._serde import (
    STATE_FORMAT_VERSION,
    StateFormatError,
    decode_state,
    encode_state,
)
from checkers.metrics.frequencies import FrequencyState, StoredTable
from checkers.private_files import private_directory

Record = dict[str, Any]
#: A state as loaded: a stored frequency table comes back unopened, to be merged in one scan.
LoadedState = State | StoredTable


def analyzer_key(analyzer: Analyzer) -> str:
    """A stable text key: the analyzer's class and parameters."""
    return repr(analyzer)


class StateStore(Protocol):
    """Keeps analyzer states per dataset partition (Deequ's StateLoader and StatePersister)."""

    def load(
        self, dataset: str, analyzers: Iterable[Analyzer], partitions: Sequence[str] | None = None
    ) -> dict[str, dict[Analyzer, LoadedState]]:
        """The stored states of `analyzers` in each of `partitions` (every stored partition
        when None), a partition without states mapping to {}."""

    def save(self, dataset: str, partition: str, states: Mapping[Analyzer, LoadedState]) -> None:
        """Store the states of one partition, replacing those of the same analyzers, atomically."""


@runtime_checkable
class FrequencyTableStore(Protocol):
    """A store that keeps frequency tables as Parquet: the engine writes each run's tables
    there once, as it builds them (a plain StateStore gets them unwritten in `save`)."""

    def frequency_location(self, dataset: str, partition: str) -> str:
        """A fresh directory for this partition's frequency tables."""


class RecordStore:
    """What the stores share: states encoded as records ({analyzer key: record}), frequency
    tables written under `frequency_root`, and deleted once no stored state names them (and,
    with `table_grace_s`, once that old: a younger one may be a concurrent run's)."""

    def __init__(self, frequency_root: str | os.PathLike[str], *, table_grace_s: float = 0) -> None:
        self._frequency_root = Path(frequency_root)
        self.table_grace_s = table_grace_s

    # Subclasses keep records: {analyzer key: encoded state}.
    def _write(self, dataset: str, partition: str, records: Mapping[str, Record]) -> None:
        raise NotImplementedError

    def _read(self, dataset: str, partition: str) -> dict[str, Record]:
        raise NotImplementedError

    def partitions(self, dataset: str) -> list[str]:
        """Partitions of the dataset that have stored states, sorted."""
        raise NotImplementedError

    def _read_many(
        self, dataset: str, partitions: Sequence[str] | None
    ) -> dict[str, dict[str, Record]]:
        chosen = self.partitions(dataset) if partitions is None else partitions
        return {p: self._read(dataset, p) for p in chosen}

    def _partition_dir(self, dataset: str, partition: str) -> Path:
        return self._frequency_root / quote(dataset, safe="") / quote(partition, safe="")

    def frequency_location(self, dataset: str, partition: str) -> str:
        return str(self._partition_dir(dataset, partition) / f"freq-{uuid.uuid4().hex}")

    def save(self, dataset: str, partition: str, states: Mapping[Analyzer, LoadedState]) -> None:
        records = {}
        for analyzer, state in states.items():
            if isinstance(state, FrequencyState) and state.location is None:
                if state.frequencies is None:
                    continue  # the empty table: nothing to keep
                state = state.written(self.frequency_location(dataset, partition))
            records[analyzer_key(analyzer)] = encode_state(state)
        self._write(dataset, partition, records)
        self._prune(dataset, partition)

    def load(
        self,
        dataset: str,
        analyzers: Iterable[Analyzer],
        partitions: Sequence[str] | None = None,
        *,
        skip_unreadable: bool = False,
    ) -> dict[str, dict[Analyzer, LoadedState]]:
        """The stored states (frequency tables unopened). A state of another format version
        raises StateFormatError, or with `skip_unreadable` is left out, as is then a frequency
        state whose table has gone missing (the caller reads that partition again)."""
        wanted = {analyzer_key(a): a for a in analyzers}
        found: dict[str, dict[Analyzer, LoadedState]] = {}
        for partition, records in self._read_many(dataset, partitions).items():
            states = found.setdefault(partition, {})
            for key, record in records.items():
                analyzer = wanted.get(key)
                if analyzer is None or (skip_unreadable and not _table_exists(record)):
                    continue
                try:
                    states[analyzer] = _opened(record)
                except StateFormatError:
                    if not skip_unreadable:
                        raise
        return found

    def _prune(self, dataset: str, partition: str) -> None:
        """Delete the partition's frequency tables that no stored state names any more."""
        directory = self._partition_dir(dataset, partition)
        if not directory.is_dir():
            return
        used = {
            Path(location).name
            for r in self._read(dataset, partition).values()
            if (location := _location(r))
        }
        oldest = time.time() - self.table_grace_s
        for child in directory.iterdir():
            young = self.table_grace_s and child.stat().st_mtime >= oldest
            if child.name.startswith("freq-") and child.name not in used and not young:
                shutil.rmtree(child, ignore_errors=True)


def _opened(record: Record) -> LoadedState:
    if record["kind"] == "frequencies":
        if record.get("format_version") != STATE_FORMAT_VERSION:
            decode_state(record)  # raises StateFormatError, saying what to do
        return StoredTable(record["payload"])
    return cast(State, decode_state(record))


def _location(record: Record) -> str | None:
    """Where a frequency state's Parquet table lives (None for other states)."""
    location = record["payload"].get("location") if record["kind"] == "frequencies" else None
    return str(location) if location else None


def _table_exists(record: Record) -> bool:
    """A frequency state's Parquet table is still there (remote locations are assumed to be)."""
    location = _location(record)
    return location is None or "://" in location or os.path.isdir(location)


class InMemoryStateStore(RecordStore):
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


class FileStateStore(RecordStore):
    """One directory per dataset partition: `states.json` plus Parquet frequency tables.

    Writes go to a temporary file renamed over the old one, so a crash never leaves half a file."""

    FILE = "states.json"

    def __init__(self, path: str | os.PathLike[str]) -> None:
        super().__init__(path)
        self.path = Path(path)

    def _write(self, dataset: str, partition: str, records: Mapping[str, Record]) -> None:
        directory = self._partition_dir(dataset, partition)
        private_directory(directory)
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
        return json.loads(file.read_text())["states"]

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
