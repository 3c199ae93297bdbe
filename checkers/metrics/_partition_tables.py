"""Frequency tables of many partitions from one query: the unified table grouped by the partition
column too, written once as Parquet split by partition, each partition's part then moved to where
its store keeps it. A first run (or a full re-read) over 365 partitions so costs one job for its
frequency tables, not 365. A new rollup of the stable partitions' tables and these
(`rollups.PendingRollup`) can be written in the same job, as one more part of the write."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from checkers.metrics import _grouping
from checkers.metrics.frequencies import SET_ID, StoredTable, key_column
from checkers.metrics.rollups import PendingRollup, Rollup

#: The partition's position among those written, a directory level of the staged table: plain
#: digits, so no partition key needs escaping in a path.
POSITION = "__dq_position"

PartitionTables = dict[str, dict[_grouping.GroupingSet, StoredTable]]


def movable(locations: Iterable[str]) -> bool:
    """Whether every location is a local directory, where a part can be moved by a rename."""
    return all("://" not in location for location in locations)


def write_partition_tables(
    df: DataFrame,
    sets: Sequence[_grouping.GroupingSet],
    layout: _grouping.Layout,
    *,
    column: str,
    locations: Mapping[str, str],
    stack_size: int | None,
    rollup: PendingRollup | None = None,
) -> tuple[PartitionTables, Rollup]:
    """Each partition's frequency state per set, stored at `locations[partition]` (local
    directories), from one Spark job over `df` whose `column` holds the partition key. The
    tables are left unopened: the states are saved and merged from their locations. With
    `rollup`, the same job writes it too, holding these tables and its stable ones (its states,
    to be saved once the partitions' are; {} without it)."""
    table = _grouping.frequency_table(df, sets, layout, stack_size=stack_size, by=(column,))
    schema = table.drop(column).schema.json()
    positions = {partition: i for i, partition in enumerate(locations)}
    lookup = F.create_map(*[F.lit(x) for p, i in positions.items() for x in (p, i)])
    staged = table.withColumn(POSITION, lookup[F.col(column)]).where(F.col(POSITION).isNotNull())
    rolled = None
    if rollup is not None:
        new = _grouping.set_states(staged.drop(column, POSITION), None, sets, layout)
        rolled = rollup.table(sets, new)
    written = staged.drop(column)
    if rolled is not None:
        part = rolled.withColumn(POSITION, F.lit(len(positions)))
        written = written.unionByName(part, allowMissingColumns=True)
    staging = f"{next(iter(locations.values()))}-all"
    written.write.mode("overwrite").partitionBy(POSITION, SET_ID).parquet(staging)
    try:
        for partition, i in positions.items():
            _move(Path(staging) / f"{POSITION}={i}", Path(locations[partition]))
        if rollup is not None and rolled is not None:
            _move(Path(staging) / f"{POSITION}={len(positions)}", Path(rollup.location))
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    tables = {
        partition: {s: _stored(s, location, layout[s.set_id], schema) for s in sets}
        for partition, location in locations.items()
    }
    if rollup is None or rolled is None:
        return tables, {}
    return tables, rollup.stored(sets, rolled.schema.json(), dict(locations))


def _stored(
    grouping: _grouping.GroupingSet, location: str, stored_keys: tuple[str, ...], schema: str
) -> StoredTable:
    """What FrequencyState.read(...).to_payload() would give, without opening the table."""
    names = stored_keys or tuple(key_column(i) for i in range(len(grouping.columns)))
    return StoredTable(
        {
            "columns": list(grouping.columns),
            "location": location,
            "set_id": grouping.set_id,
            "stored_keys": list(names),
            "table_schema": schema,
        }
    )


def _move(part: Path, target: Path) -> None:
    """The partition's part becomes its table (an empty one for a partition without rows)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    if part.is_dir():
        os.replace(part, target)
    else:
        target.mkdir()
