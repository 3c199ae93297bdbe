"""A cached rollup of stored frequency tables: each frequency analyzer's tables of many partitions
merged once and stored as one table, which names the exact stored tables it holds. A merge then
reads the rollup and the few tables it does not hold (a new partition's), not every partition's.

A rollup is used only when every table it names is still the one its partition stores (tables
are written under fresh names, so a re-read, rewritten or forgotten partition no longer matches);
otherwise it is ignored and the merge reads every table, as without it. So a rollup that is
stale, half written or of another run can cost time, never a wrong answer."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any

from checkers.metrics import _grouping
from checkers.metrics._analyzer import Analyzer, FrequencyAnalyzer
from checkers.metrics.frequencies import FrequencyState, StoredTable, merge_frequencies
from checkers.metrics.state_stores import FrequencyTableStore, LoadedState, RecordStore, StateStore

__all__ = [
    "REFRESH_AFTER",
    "ROLLUP",
    "Rollup",
    "fold",
    "load_rollup",
    "refresh",
    "rolled_up",
    "save_rollup",
]

#: The partition key a dataset's rollup is stored under, beside its partitions' states.
ROLLUP = "__dq_rollup"
#: Tables outside the rollup at which a merge writes a new rollup holding them all.
REFRESH_AFTER = 8
#: The payload field naming the stored tables a rollup holds: {partition: table location}.
COVERS = "covers"

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


def refresh(
    analyzers: Sequence[Analyzer],
    parts: Mapping[str, States],
    rollup: Rollup,
    store: FrequencyTableStore,
    dataset: str,
) -> tuple[Rollup, int]:
    """A rollup holding every stored frequency table of `parts` (the valid old rollup and the
    tables it lacks, merged), written as one table partitioned by grouping set: one Spark job.
    Parts whose tables are not stored yet hold nothing to name, and refresh refuses them."""
    frequency = [a for a in dict.fromkeys(analyzers) if isinstance(a, FrequencyAnalyzer)]
    if not frequency:
        return {}, 0
    if any(
        _location(s) == "" and isinstance(s, FrequencyState) and s.frequencies is not None
        for states in parts.values()
        for a, s in states.items()
        if a in frequency
    ):
        raise ValueError("a rollup holds stored tables only: save the partitions' states first")
    folded, _ = fold(frequency, parts, rollup)
    sets = _grouping.plan_sets(frequency)
    layout = _grouping.shared_layout(sets)
    merged: dict[_grouping.GroupingSet, FrequencyState] = {}
    for s in sets:
        first = s.analyzers[0]
        tables: list[FrequencyState | StoredTable] = []
        for part in folded:
            if isinstance(state := part.get(first), (FrequencyState, StoredTable)):
                tables.append(state)
        merged[s] = merge_frequencies(tuple(sorted(first.columns)), tables)
    table = _grouping.table_from_states(merged, layout)
    covers_of = {
        a: {key: _location(states.get(a)) for key, states in parts.items()} for a in frequency
    }
    if table is None:  # no rows anywhere: nothing to write, nothing to roll up
        return {}, 0
    location = store.frequency_location(dataset, ROLLUP)
    schema = table.schema.json()
    table.write.mode("overwrite").partitionBy(_grouping.SET_ID).parquet(location)
    written: Rollup = {}
    for s in sets:
        for analyzer in s.analyzers:
            payload: dict[str, Any] = {
                "columns": list(s.columns),
                "location": location,
                "set_id": s.set_id,
                "stored_keys": list(layout[s.set_id]),
                "table_schema": schema,
                COVERS: covers_of[s.analyzers[0]],
            }
            written[analyzer] = StoredTable(payload)
    return written, 1


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
