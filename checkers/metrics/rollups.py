"""A cached rollup of stored frequency tables: each frequency analyzer's tables of many partitions
merged once and stored as one table, which names the exact stored tables it holds. A merge then
reads the rollup and the few tables it does not hold (a new partition's), not every partition's.

A rollup is used only when every table it names is still the one its partition stores (tables
are written under fresh names, so a re-read, rewritten or forgotten partition no longer matches);
otherwise it is ignored and the merge reads every table, as without it. So a rollup that is
stale, half written or of another run can cost time, never a wrong answer.

A run that reads new partitions writes a due rollup in the Spark job that writes their tables
(`refresh_beside`), so refreshing costs no job of its own; other runs write it alone (`refresh`)."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pyspark.sql import DataFrame

from checkers.metrics import _grouping
from checkers.metrics._analyzer import Analyzer, FrequencyAnalyzer
from checkers.metrics.frequencies import FrequencyState, StoredTable, merge_frequencies
from checkers.metrics.state_stores import FrequencyTableStore, LoadedState, RecordStore, StateStore

__all__ = [
    "REFRESH_AFTER",
    "ROLLUP",
    "PendingRollup",
    "Rollup",
    "fold",
    "load_rollup",
    "refresh",
    "refresh_beside",
    "rolled_up",
    "save_rollup",
]

#: The partition key a dataset's rollup is stored under, beside its partitions' states.
ROLLUP = "__dq_rollup"
#: Tables outside the rollup at which a merge writes a new rollup holding them all.
REFRESH_AFTER = 8
#: The payload field naming the stored tables a rollup holds: {partition: table location}.
COVERS = "covers"
#: The prefix of a rollup table's key columns.
ROLLUP_KEY = "__dq_r"

States = Mapping[Analyzer, LoadedState]
#: Each frequency analyzer's rolled-up table (its payload names the tables it holds).
Rollup = dict[Analyzer, StoredTable]


def _location(state: LoadedState | None) -> str:
    """Where a partition keeps this stored table ("" when it keeps none: an empty table)."""
    if isinstance(state, StoredTable):
        return str(state.payload.get("location") or "")
    if isinstance(state, FrequencyState):
        return state.location or ""
    return ""


def _valid(rolled: StoredTable, analyzer: Analyzer, parts: Mapping[str, States]) -> bool:
    """Whether every table the rollup holds is the one its partition stores now."""
    covers: dict[str, str] = rolled.payload.get(COVERS) or {}
    return bool(covers) and all(
        key in parts and _location(parts[key].get(analyzer)) == location
        for key, location in covers.items()
    )


def fold(
    analyzers: Sequence[Analyzer], parts: Mapping[str, States], rollup: Rollup
) -> tuple[list[States], int]:
    """The parts to merge (one mapping of states per part): each frequency analyzer's valid
    rollup as a part of its own, and every partition's states without the tables it holds. Also
    how many stored frequency tables the merge reads (rollups included)."""
    held: dict[Analyzer, set[str]] = {
        a: covered
        for a in dict.fromkeys(analyzers)
        if isinstance(a, FrequencyAnalyzer) and (covered := _covers(rollup, a, parts))
    }
    folded: list[States] = [{a: rollup[a] for a in held}] if held else []
    for key, states in parts.items():
        folded.append({a: s for a, s in states.items() if key not in held.get(a, ())})
    tables = {
        _location(s)
        for part in folded
        for a, s in part.items()
        if isinstance(a, FrequencyAnalyzer) and a in analyzers and _location(s)
    }
    return folded, len(tables)


def outside(analyzers: Sequence[Analyzer], parts: Mapping[str, States], rollup: Rollup) -> int:
    """The most partitions whose stored table of one frequency analyzer the rollup lacks."""
    counts = []
    for analyzer in dict.fromkeys(analyzers):
        if isinstance(analyzer, FrequencyAnalyzer):
            held = _covers(rollup, analyzer, parts)
            counts.append(sum(1 for k, s in parts.items() if analyzer in s and k not in held))
    return max(counts, default=0)


def _covers(rollup: Rollup, analyzer: Analyzer, parts: Mapping[str, States]) -> set[str]:
    rolled = rollup.get(analyzer)
    return set(rolled.payload[COVERS]) if rolled and _valid(rolled, analyzer, parts) else set()


@dataclass(frozen=True)
class PendingRollup:
    """A new rollup before it is written: the stable partitions' tables it holds (each frequency
    analyzer's valid old rollup and the stored tables it lacks) and where it goes. Written alone
    by `refresh`, or in the same Spark job as new partitions' frequency tables (`analyze_partitions(
    ..., rollup=)`), then holding theirs too."""

    stable: tuple[States, ...]
    #: each frequency analyzer's stable tables: {partition: table location}
    covers: Mapping[Analyzer, Mapping[str, str]]
    location: str

    def table(
        self,
        sets: Sequence[_grouping.GroupingSet],
        new: Mapping[_grouping.GroupingSet, FrequencyState] | None = None,
    ) -> DataFrame | None:
        """The rollup's unified table (its own key columns, `rollup_layout`): each set's stable
        tables and its `new` table (the partitions read now, unwritten: a key may repeat, once
        per partition) added up per key in one aggregation."""
        merged: dict[_grouping.GroupingSet, FrequencyState] = {}
        for s in sets:
            first = s.analyzers[0]
            tables: list[FrequencyState | StoredTable] = [
                state
                for part in self.stable
                if isinstance(state := part.get(first), (FrequencyState, StoredTable))
            ]
            rows = new[s].frequencies if new is not None else None
            loose = [rows] if rows is not None else []
            merged[s] = merge_frequencies(tuple(sorted(first.columns)), tables, loose=loose)
        return _grouping.table_from_states(merged, rollup_layout(sets))

    def stored(
        self,
        sets: Sequence[_grouping.GroupingSet],
        table_schema: str,
        new: Mapping[str, str] | None = None,
    ) -> Rollup:
        """The rollup's states once its table is at `location`; `new` names the tables of the
        partitions read now that it holds too: {partition: table location}."""
        layout = rollup_layout(sets)
        written: Rollup = {}
        for s in sets:
            covers = {**self.covers.get(s.analyzers[0], {}), **(new or {})}
            for analyzer in s.analyzers:
                payload: dict[str, Any] = {
                    "columns": list(s.columns),
                    "location": self.location,
                    "set_id": s.set_id,
                    "stored_keys": list(layout[s.set_id]),
                    "table_schema": table_schema,
                    COVERS: covers,
                }
                written[analyzer] = StoredTable(payload)
        return written


def rollup_layout(sets: Sequence[_grouping.GroupingSet]) -> _grouping.Layout:
    """One key column per source column, as `shared_layout`, under names of its own
    (`__dq_r0`, ...): a rollup written beside new partitions' tables shares their Parquet
    write, whose key columns (`__dq_k0`, `__dq_v0`, ...) may hold other columns' types."""
    columns = sorted({c for s in sets for c in s.columns})
    names = {c: f"{ROLLUP_KEY}{i}" for i, c in enumerate(columns)}
    return {s.set_id: tuple(names[c] for c in s.columns) for s in sets}


def pending(
    analyzers: Sequence[Analyzer],
    parts: Mapping[str, States],
    rollup: Rollup,
    location: str,
) -> PendingRollup:
    """The rollup of every stored frequency table of `parts`, to be written at `location`.
    Parts whose tables are not stored yet hold nothing to name, and it refuses them."""
    frequency = [a for a in dict.fromkeys(analyzers) if isinstance(a, FrequencyAnalyzer)]
    if any(
        _location(s) == "" and isinstance(s, FrequencyState) and s.frequencies is not None
        for states in parts.values()
        for a, s in states.items()
        if a in frequency
    ):
        raise ValueError("a rollup holds stored tables only: save the partitions' states first")
    folded, _ = fold(frequency, parts, rollup)
    covers: dict[Analyzer, Mapping[str, str]] = {
        a: {key: _location(states.get(a)) for key, states in parts.items()} for a in frequency
    }
    return PendingRollup(tuple(folded), covers, location)


def refresh(
    analyzers: Sequence[Analyzer],
    parts: Mapping[str, States],
    rollup: Rollup,
    store: FrequencyTableStore,
    dataset: str,
) -> tuple[Rollup, int]:
    """A rollup holding every stored frequency table of `parts` (the valid old rollup and the
    tables it lacks, merged), written as one table partitioned by grouping set: one Spark job."""
    frequency = [a for a in dict.fromkeys(analyzers) if isinstance(a, FrequencyAnalyzer)]
    if not frequency:
        return {}, 0
    fresh = pending(frequency, parts, rollup, store.frequency_location(dataset, ROLLUP))
    sets = _grouping.plan_sets(frequency)
    table = fresh.table(sets)
    if table is None:  # no rows anywhere: nothing to write, nothing to roll up
        return {}, 0
    table.write.mode("overwrite").partitionBy(_grouping.SET_ID).parquet(fresh.location)
    return fresh.stored(sets, table.schema.json()), 1


def refresh_beside(
    analyzers: Sequence[Analyzer],
    stable: Mapping[str, States],
    new: Collection[str],
    store: RecordStore,
    dataset: str,
) -> PendingRollup | None:
    """The rollup a run over the `new` partitions writes in the same Spark job as their
    frequency tables, holding those and every stable partition's (`stable`: the stored parts it
    merges with them), or None when the run keeps the stored rollup: fewer than
    `REFRESH_AFTER` tables would lie outside it, and the run did not read every partition."""
    frequency = [a for a in dict.fromkeys(analyzers) if isinstance(a, FrequencyAnalyzer)]
    if not frequency or not new:
        return None
    rollup = load_rollup(store, dataset, frequency)
    every = not stable and len(new) > 1
    if outside(frequency, stable, rollup) + len(new) < REFRESH_AFTER and not every:
        return None
    return pending(frequency, stable, rollup, store.frequency_location(dataset, ROLLUP))


def load_rollup(store: RecordStore, dataset: str, analyzers: Sequence[Analyzer]) -> Rollup:
    """The stored rollup of the frequency analyzers among `analyzers` ({} when none, or when
    its table has gone missing or is of another format version)."""
    frequency = [a for a in dict.fromkeys(analyzers) if isinstance(a, FrequencyAnalyzer)]
    if not frequency:
        return {}
    found = store.load(dataset, frequency, [ROLLUP], skip_unreadable=True)
    return {a: s for a, s in found.get(ROLLUP, {}).items() if isinstance(s, StoredTable)}


def save_rollup(store: StateStore, dataset: str, rollup: Rollup) -> None:
    """Store the rollup in place of the previous one (one atomic save of its partition)."""
    store.save(dataset, ROLLUP, rollup)


def rolled_up(
    analyzers: Sequence[Analyzer],
    parts: Mapping[str, States],
    store: RecordStore,
    dataset: str,
    *,
    read_now: Collection[str] = (),
    may_refresh: bool = True,
) -> tuple[list[States], int, int]:
    """The parts to merge (`fold`) with the stored rollup of `analyzers`' frequency tables, the
    Spark actions taken and the stored tables the merge reads. With `may_refresh`, a new rollup
    is written first when `REFRESH_AFTER` tables lie outside it, or when every part was read
    now (`read_now`: a first run or a full re-read, whose merge reads every table anyway)."""
    rollup = load_rollup(store, dataset, analyzers)
    actions = 0
    lacking = outside(analyzers, parts, rollup)
    every = len(parts) > 1 and set(parts) <= set(read_now)
    if may_refresh and lacking and (lacking >= REFRESH_AFTER or every):
        try:
            fresh, actions = refresh(analyzers, parts, rollup, store, dataset)
            if fresh:
                save_rollup(store, dataset, fresh)
                rollup = fresh
        except Exception:  # a cache: without a new rollup the merge reads the tables it lacks
            actions += 1
    folded, tables = fold(analyzers, parts, rollup)
    return folded, actions, tables
