"""What the project database keeps for incremental checks: per (check, partition), the analyzer
states computed from the partition and the fingerprint of the data they came from. States are
written before the fingerprint, so a crash in between leaves a partition that is read again."""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from checkers.engine_tables import partition_states, partitions
from checkers.metrics import Analyzer
from checkers.metrics.rollups import ROLLUP
from checkers.metrics.sql_state_store import SqlStateStore, StateTable
from checkers.metrics.state_stores import LoadedState
from checkers.project_db import utc_now

__all__ = ["PARTITION_STATES", "TABLE_GRACE_S", "Known", "PartitionStore"]

#: Where incremental checks keep their states: the engine's SQL store over the project
#: database's table (migration 7), keyed by check name and partition key.
PARTITION_STATES = StateTable(
    partition_states, dataset="check_name", partition="partition_key", digest="analyzer_digest"
)

#: Seconds an unreferenced frequency table is kept: a younger one may be a concurrent run's,
#: written but not yet saved, or replaced while that run still merges it.
TABLE_GRACE_S = 6 * 3600


@dataclass(frozen=True)
class Known:
    """What is stored for one partition of a check."""

    fingerprint: str
    definition: str
    rows: int | None
    partition_ts: dt.datetime | None
    data_schema: str | None = None
    updated_at: dt.datetime | None = None


class PartitionStore:
    """The stored partitions of incremental checks: fingerprints in `dq_partitions`, states in
    `dq_partition_states` (through the engine's StateStore), frequency tables under
    `frequency_root`; beside them, each check's rollup of its frequency tables (`rollups.py`)."""

    def __init__(self, engine: Engine, frequency_root: str | os.PathLike[str]) -> None:
        self.engine = engine
        self.states = SqlStateStore(
            engine,
            frequency_root=frequency_root,
            table=PARTITION_STATES,
            whole_partitions=True,
            table_grace_s=TABLE_GRACE_S,
        )

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
    ) -> dict[str, dict[Analyzer, LoadedState]]:
        """The stored states of `analyzers` in each of `keys`. A state of another format
        version, or a frequency state whose table has gone missing, is left out: its partition
        is then read again."""
        return self.states.load(check, analyzers, list(keys), skip_unreadable=True)

    def save(
        self,
        check: str,
        partition: str,
        states: Mapping[Analyzer, LoadedState],
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
        """Drop partitions: the fingerprints first (so a crash leaves them unknown, to be read
        again), then the states and frequency tables."""
        keys = list(keys)
        if not keys:
            return
        with self.engine.begin() as connection:
            connection.execute(
                partitions.delete().where(
                    partitions.c.check_name == check, partitions.c.partition_key.in_(keys)
                )
            )
        self.states.forget(check, keys)

    def forget_rollup(self, check: str) -> None:
        """Drop the check's rollup of frequency tables (its next merge reads every table)."""
        self.states.forget(check, [ROLLUP])
