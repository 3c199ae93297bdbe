"""Frequency tables for all grouping analyzers of a run in one grouping query, and their metrics
in one aggregation over the (possibly stored and merged) tables.

Every distinct (grouping columns, where) is one grouping set of a single `GROUPING SETS` query, so
a wide table's per-column uniqueness costs one shuffle, not one per column. A `where` becomes a
boolean key column of its set, so filtered sets share the same query."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from checkers.metrics._analyzer import FrequencyAnalyzer, FrequencyView
from checkers.metrics._metric import Metric, MetricComputationError
from checkers.metrics.frequencies import COUNT, SET_ID, FrequencyState, key_column

GID = "__dq_gid"


@dataclass(frozen=True)
class GroupingSet:
    set_id: int
    columns: tuple[str, ...]  # sorted
    where: str | None
    analyzers: tuple[FrequencyAnalyzer, ...]


def plan_sets(analyzers: Sequence[FrequencyAnalyzer]) -> list[GroupingSet]:
    by_key: dict[tuple[tuple[str, ...], str | None], list[FrequencyAnalyzer]] = {}
    for analyzer in analyzers:
        by_key.setdefault(analyzer.grouping_key, []).append(analyzer)
    return [
        GroupingSet(i, columns, where, tuple(members))
        for i, ((columns, where), members) in enumerate(by_key.items())
    ]


def global_key_names(sets: Sequence[GroupingSet]) -> dict[str, str]:
    """Source column name -> its key column in the unified table (shared by all sets)."""
    names = sorted({c for s in sets for c in s.columns})
    return {name: key_column(i) for i, name in enumerate(names)}


def frequency_table(df: DataFrame, sets: Sequence[GroupingSet], keys: Mapping[str, str]) -> DataFrame:
    """One lazy query: columns `__dq_set`, the key columns and `__dq_count`."""
    wheres = sorted({s.where for s in sets if s.where is not None})
    flag = {w: f"__dq_w{i}" for i, w in enumerate(wheres)}
    prepared = df.select(
        *[F.col(source).alias(name) for source, name in keys.items()],
        *[F.expr(w).alias(flag[w]) for w in wheres],
    )
    all_columns = list(keys.values()) + list(flag.values())
    members = [
        [keys[c] for c in s.columns] + ([flag[s.where]] if s.where is not None else [])
        for s in sets
    ]
    grouped = prepared.groupingSets(members, *all_columns).agg(
        F.count(F.lit(1)).alias(COUNT), F.grouping_id().alias(GID)
    )
    # grouping_id sets bit (n-1-i) for every column i NOT grouped in a row's set.
    width = len(all_columns)
    set_id: Column = F.lit(None).cast("int")
    for s, member in zip(reversed(sets), reversed(members), strict=True):
        gid = sum(1 << (width - 1 - i) for i, c in enumerate(all_columns) if c not in member)
        condition = F.col(GID) == gid
        if s.where is not None:
            condition = condition & F.col(flag[s.where])
        set_id = F.when(condition, F.lit(s.set_id)).otherwise(set_id)
    return grouped.select(set_id.alias(SET_ID), *list(keys.values()), F.col(COUNT)).where(
        F.col(SET_ID).isNotNull()
    )


def set_states(
    table: DataFrame,
    location: str | None,
    sets: Sequence[GroupingSet],
    keys: Mapping[str, str],
) -> dict[GroupingSet, FrequencyState]:
    """Per-set states: slices of the stored table at `location`, else of the lazy `table`."""
    states = {}
    schema = table.schema.json()
    for s in sets:
        stored = tuple(keys[c] for c in s.columns)
        if location is not None:
            states[s] = FrequencyState.read(s.columns, location, s.set_id, stored, schema)
        else:
            sliced = table.where(F.col(SET_ID) == s.set_id).select(
                *[F.col(n).alias(key_column(i)) for i, n in enumerate(stored)], F.col(COUNT)
            )
            states[s] = FrequencyState(s.columns, sliced)
    return states


def table_from_states(
    states: Mapping[GroupingSet, FrequencyState], keys: Mapping[str, str]
) -> DataFrame | None:
    """The unified table of several per-set states (used for merged and stored states)."""
    parts = []
    for s, state in states.items():
        if state.frequencies is None:
            continue
        parts.append(
            state.frequencies.select(
                F.lit(s.set_id).alias(SET_ID),
                *[F.col(key_column(i)).alias(keys[c]) for i, c in enumerate(s.columns)],
                F.col(COUNT),
            )
        )
    if not parts:
        return None
    table = parts[0]
    for part in parts[1:]:
        table = table.unionByName(part, allowMissingColumns=True)
    return table


def merge_tables(current: DataFrame, earlier: DataFrame | None, keys: Mapping[str, str]) -> DataFrame:
    """Add the counts of an earlier unified table to the current one, per set and key."""
    if earlier is None:
        return current
    union = current.unionByName(earlier, allowMissingColumns=True)
    return union.groupBy(SET_ID, *keys.values()).agg(F.sum(COUNT).alias(COUNT))


def frequency_metrics(
    table: DataFrame | None, sets: Sequence[GroupingSet], keys: Mapping[str, str]
) -> tuple[dict[FrequencyAnalyzer, Metric], int]:
    """Every frequency analyzer's metric in one aggregation over the unified table."""
    analyzers = [a for s in sets for a in s.analyzers]
    if not analyzers:
        return {}, 0
    if table is None:  # nothing stored and nothing computed: every table is empty
        return {a: _value(a, [None] * 4) for a in analyzers}, 0
    views: list[tuple[FrequencyAnalyzer, FrequencyView]] = []
    windows: dict[str, Column] = {}
    for s in sets:
        for a in s.analyzers:
            view = FrequencyView(
                set_condition=F.col(SET_ID) == s.set_id,
                count=F.col(COUNT),
                key_names=dict(keys),
                name_prefix=f"__dq_a{len(views)}",
            )
            views.append((a, view))
            windows.update(a.window_columns(view))
    if windows:
        table = table.withColumns(windows)
    columns, slices = [], []
    for analyzer, view in views:
        aggs = analyzer.frequency_aggregations(view)
        slices.append((len(columns), len(aggs)))
        columns.extend(aggs)
    row = table.agg(*columns).collect()[0]
    return {
        a: _value(a, list(row[start : start + size]))
        for (a, _), (start, size) in zip(views, slices, strict=True)
    }, 1


def _value(analyzer: FrequencyAnalyzer, values: list[object]) -> Metric:
    try:
        return Metric(analyzer, value=analyzer.value_from_aggregates(values))
    except MetricComputationError as exc:
        return Metric(analyzer, error=str(exc))
