"""Frequency tables for all grouping analyzers of a run in one query, and their metrics in one
aggregation over the (possibly stored and merged) tables.

The unified frequency table has one row per (grouping set, key): `__dq_set`, the key columns,
`__dq_keyed` (the key is not all NULL) and `__dq_count`. A *layout* names each set's key columns
in it. Single-column sets of one type are stacked: every row becomes one (set, value) pair per set
and one narrow group-by counts them all, sharing one value column. Multi-column sets share one
GROUPING SETS query, a `where` becoming a boolean key column of its set. Stacking measured several
times faster than GROUPING SETS on wide tables, whose rows carry every grouped column. A lone set
(one stacked column, or the only multi-column set) is a plain group-by: GROUPING SETS would add
an Expand and a grouping-id key to every hashed row for nothing.

On columnar files a stack holds at most `COLUMNAR_STACK` columns, its parts unioned in the same
query: each part reads only its own columns, and its smaller hash tables measured faster than one
stack of every column (benchmarks/README.md). Row formats keep one stack, so the rows are parsed
once."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import StructType

from checkers.metrics._analyzer import Analyzer, FrequencyAnalyzer, FrequencySummary, FrequencyView
from checkers.metrics._capped import collect_capped
from checkers.metrics._metric import EmptyStateError, Metric, MetricComputationError
from checkers.metrics.frequencies import COUNT, SET_ID, FrequencyState, key_column, sum_counts

GID = "__dq_gid"
#: the most columns in one stack when the source is columnar files
COLUMNAR_STACK = 5
KEYED = "__dq_keyed"

#: set id -> names of its key columns in the unified table, in the set's column order
Layout = dict[int, tuple[str, ...]]


@dataclass(frozen=True)
class GroupingSet:
    set_id: int
    columns: tuple[str, ...]  # sorted
    where: str | None
    analyzers: tuple[FrequencyAnalyzer, ...]

    def source(self, name: str) -> Column:
        """What the key column `name` is grouped by (a source column or a derived key)."""
        return self.analyzers[0].key_source(name)


def plan_sets(analyzers: Sequence[FrequencyAnalyzer]) -> list[GroupingSet]:
    by_key: dict[tuple[tuple[str, ...], str | None], list[FrequencyAnalyzer]] = {}
    for analyzer in analyzers:
        by_key.setdefault(analyzer.grouping_key, []).append(analyzer)
    return [
        GroupingSet(i, columns, where, tuple(members))
        for i, ((columns, where), members) in enumerate(by_key.items())
    ]


def shared_layout(sets: Sequence[GroupingSet]) -> Layout:
    """One key column per source column, shared by every set that groups by it."""
    names = {c: key_column(i) for i, c in enumerate(sorted({c for s in sets for c in s.columns}))}
    return {s.set_id: tuple(names[c] for c in s.columns) for s in sets}


def _stacks(
    schema: StructType, sets: Sequence[GroupingSet]
) -> tuple[dict[str, list[GroupingSet]], list[GroupingSet]]:
    stacks: dict[str, list[GroupingSet]] = {}
    multi = []
    for s in sets:
        dtype = s.analyzers[0].key_type(schema, s.columns[0]) if len(s.columns) == 1 else None
        if dtype is None:
            multi.append(s)
        else:
            stacks.setdefault(dtype.simpleString(), []).append(s)
    return stacks, multi


def run_layout(schema: StructType, sets: Sequence[GroupingSet]) -> Layout:
    """Stacked sets share their type's value column; multi-column sets use the shared layout."""
    stacks, multi = _stacks(schema, sets)
    layout = shared_layout(multi)
    for i, group in enumerate(stacks.values()):
        layout.update({s.set_id: (f"__dq_v{i}",) for s in group})
    return layout


def frequency_table(
    df: DataFrame,
    sets: Sequence[GroupingSet],
    layout: Layout,
    *,
    stack_size: int | None = None,
    by: Sequence[str] = (),
) -> DataFrame:
    """The unified table of `df` for all sets, as one lazy query; `stack_size` caps the columns
    stacked in one group-by (None: one stack per type). With `by` (e.g. a partition or segment
    column), every group-by also groups by those columns, kept in the table: one table per
    value of `by`, from the same query."""
    stacks, multi = _stacks(df.schema, sets)
    size = stack_size or len(sets)
    parts = [
        _stacked_table(df, group[start : start + size], layout, by)
        for group in stacks.values()
        for start in range(0, len(group), size)
    ]
    if len(multi) == 1:
        parts.append(_group_by_table(df, multi[0], layout[multi[0].set_id], by))
    elif multi:
        parts.append(_grouping_sets_table(df, multi, layout, by))
    return union_all(parts)


def union_all(parts: Sequence[DataFrame]) -> DataFrame:
    table = parts[0]
    for part in parts[1:]:
        table = table.unionByName(part, allowMissingColumns=True)
    return table


def _stacked_table(
    df: DataFrame, sets: Sequence[GroupingSet], layout: Layout, by: Sequence[str] = ()
) -> DataFrame:
    (value,) = layout[sets[0].set_id]
    if len(sets) == 1:  # nothing to stack
        return _group_by_table(df, sets[0], (value,), by)
    pairs = []
    for s in sets:
        pair = F.struct(F.lit(s.set_id).alias("s"), s.source(s.columns[0]).alias("v"))
        pairs.append(pair if s.where is None else F.when(F.expr(s.where), pair))
    stacked = F.array(*pairs)
    if any(s.where is not None for s in sets):  # a set's filter left a NULL pair to drop
        stacked = F.filter(stacked, lambda pair: pair.isNotNull())
    return (
        df.select(*[F.col(b) for b in by], F.inline(stacked))
        .groupBy(*[F.col(b) for b in by], F.col("s").alias(SET_ID), F.col("v").alias(value))
        .agg(F.count(F.lit(1)).alias(COUNT))
        .withColumn(KEYED, F.col(value).isNotNull())
    )


def _group_by_table(
    df: DataFrame, only: GroupingSet, names: Sequence[str], by: Sequence[str] = ()
) -> DataFrame:
    """One set's table by a plain group-by; NULL keys form groups of their own, as in GROUPING
    SETS, and the set's `where` filters the rows first."""
    rows = df if only.where is None else df.where(F.expr(only.where))
    counted = rows.groupBy(
        *[F.col(b) for b in by],
        *[only.source(c).alias(n) for c, n in zip(only.columns, names, strict=True)],
    ).agg(F.count(F.lit(1)).alias(COUNT))
    return counted.select(
        *[F.col(b) for b in by],
        F.lit(only.set_id).alias(SET_ID),
        *[F.col(n) for n in names],
        F.col(COUNT),
        _any_not_null(names).alias(KEYED),
    )


def _grouping_sets_table(
    df: DataFrame, sets: Sequence[GroupingSet], layout: Layout, by: Sequence[str] = ()
) -> DataFrame:
    keys = {c: n for s in sets for c, n in zip(s.columns, layout[s.set_id], strict=True)}
    sources = {c: s.source(c) for s in sets for c in s.columns}
    wheres = sorted({s.where for s in sets if s.where is not None})
    flag = {w: f"__dq_w{i}" for i, w in enumerate(wheres)}
    prepared = df.select(
        *[F.col(b) for b in by],
        *[sources[source].alias(name) for source, name in keys.items()],
        *[F.expr(w).alias(flag[w]) for w in wheres],
    )
    all_columns = [*by, *keys.values(), *flag.values()]
    members = [
        [*by, *layout[s.set_id], *([flag[s.where]] if s.where is not None else [])] for s in sets
    ]
    grouped = prepared.groupingSets(members, *all_columns).agg(
        F.count(F.lit(1)).alias(COUNT), F.grouping_id().alias(GID)
    )
    # grouping_id sets bit (n-1-i) for every column i NOT grouped in a row's set.
    width = len(all_columns)
    set_id: Column = F.lit(None).cast("int")
    keyed: Column = F.lit(False)
    for s, member in zip(reversed(sets), reversed(members), strict=True):
        gid = sum(1 << (width - 1 - i) for i, c in enumerate(all_columns) if c not in member)
        condition = F.col(GID) == gid
        if s.where is not None:
            condition = condition & F.col(flag[s.where])
        set_id = F.when(condition, F.lit(s.set_id)).otherwise(set_id)
        keyed = F.when(condition, _any_not_null(layout[s.set_id])).otherwise(keyed)
    return grouped.select(
        *[F.col(b) for b in by],
        set_id.alias(SET_ID),
        *list(keys.values()),
        keyed.alias(KEYED),
        F.col(COUNT),
    ).where(F.col(SET_ID).isNotNull())


def _any_not_null(names: Sequence[str]) -> Column:
    condition = F.col(names[0]).isNotNull()
    for name in names[1:]:
        condition = condition | F.col(name).isNotNull()
    return condition


def set_states(
    table: DataFrame, location: str | None, sets: Sequence[GroupingSet], layout: Layout
) -> dict[GroupingSet, FrequencyState]:
    """Per-set states: slices of the stored table at `location`, else of the lazy `table`."""
    states = {}
    schema = table.schema.json()
    for s in sets:
        stored = layout[s.set_id]
        if location is not None:
            states[s] = FrequencyState.read(s.columns, location, s.set_id, stored, schema)
        else:
            sliced = table.where(F.col(SET_ID) == s.set_id).select(
                *[F.col(n).alias(key_column(i)) for i, n in enumerate(stored)], F.col(COUNT)
            )
            states[s] = FrequencyState(s.columns, sliced)
    return states


def table_from_states(
    states: Mapping[GroupingSet, FrequencyState], layout: Layout
) -> DataFrame | None:
    """The unified table of several per-set states (used for merged and stored states)."""
    parts = []
    for s, state in states.items():
        if state.frequencies is None:
            continue
        positions = [key_column(i) for i in range(len(s.columns))]
        parts.append(
            state.frequencies.select(
                F.lit(s.set_id).alias(SET_ID),
                *[F.col(p).alias(n) for p, n in zip(positions, layout[s.set_id], strict=True)],
                _any_not_null(positions).alias(KEYED),
                F.col(COUNT),
            )
        )
    return union_all(parts) if parts else None


def merge_tables(current: DataFrame, earlier: DataFrame | None, layout: Layout) -> DataFrame:
    """Add the counts of an earlier unified table to the current one, per set and key."""
    if earlier is None:
        return current
    union = current.unionByName(earlier, allowMissingColumns=True)
    keys = sorted({n for names in layout.values() for n in names})
    return sum_counts(union, [SET_ID, KEYED, *keys])


def frequency_metrics(
    table: DataFrame | None, sets: Sequence[GroupingSet], layout: Layout
) -> tuple[dict[Analyzer, Metric], int]:
    """Every frequency analyzer's metric from one aggregation over the unified table, grouped by
    set: the shared summary once per set, plus the few analyzer-specific aggregates."""
    found, actions = segmented_frequency_metrics(table, sets, layout)
    if () in found:
        return found[()], actions
    views = _Views(sets, layout, ())
    return views.metrics({}), actions


class _Views:
    """Each analyzer's view of the table, its window columns and its slice of the aggregates."""

    def __init__(self, sets: Sequence[GroupingSet], layout: Layout, by: Sequence[str]) -> None:
        self.views: list[tuple[GroupingSet, FrequencyAnalyzer, FrequencyView]] = []
        self.windows: dict[str, Column] = {}
        self.extras: list[Column] = []
        self.slices: list[tuple[int, int]] = []
        for s in sets:
            for a in s.analyzers:
                view = FrequencyView(
                    set_condition=F.col(SET_ID) == s.set_id,
                    count=F.col(COUNT),
                    key_names=dict(zip(s.columns, layout[s.set_id], strict=True)),
                    name_prefix=f"__dq_a{len(self.views)}",
                    by=tuple(by),
                )
                self.views.append((s, a, view))
                self.windows.update(a.window_columns(view))
                aggs = a.extra_aggregations(view)
                self.slices.append((len(self.extras), len(aggs)))
                self.extras.extend(aggs)

    def metrics(self, rows: Mapping[int, Sequence[object]]) -> dict[Analyzer, Metric]:
        """The metrics from each set's aggregated row (an absent set: the empty table)."""
        metrics: dict[Analyzer, Metric] = {}
        for (s, analyzer, _), (start, size) in zip(self.views, self.slices, strict=True):
            row = rows.get(s.set_id)
            values: list[object]
            if row is None:
                found, values = FrequencySummary(), [None] * size
            else:
                found = FrequencySummary(*(v or 0 for v in row[:6]))  # type: ignore[arg-type]
                values = list(row[6 + start : 6 + start + size])
            metrics[analyzer] = _value(analyzer, found, values)
        return metrics


def segmented_frequency_metrics(
    table: DataFrame | None,
    sets: Sequence[GroupingSet],
    layout: Layout,
    *,
    by: Sequence[str] = (),
    cap: int | None = None,
) -> tuple[dict[tuple[object, ...], dict[Analyzer, Metric]], int]:
    """As `frequency_metrics`, per value of the table's `by` columns (at most `cap` of them:
    TooManySegmentsError beyond), keyed by the tuple of those values; no key for a value
    without rows."""
    if table is None or not sets:
        return {}, 0
    views = _Views(sets, layout, by)
    if views.windows:
        table = table.withColumns(views.windows)
    keyed = F.col(KEYED)
    count = F.col(COUNT)
    summary = [
        F.sum(F.when(keyed, count)),
        F.count(F.when(keyed, F.lit(1))),
        F.count(F.when(keyed & (count == 1), F.lit(1))),
        F.sum(F.when(keyed, count * F.log(count.cast("double")))),
        F.sum(count),
        F.count(F.lit(1)),
    ]
    grouped = table.groupBy(*by, SET_ID).agg(*summary, *views.extras)
    collected = grouped.collect() if cap is None else collect_capped(grouped, by, cap)
    width = len(by)
    rows: dict[tuple[object, ...], dict[int, list[object]]] = {}
    for row in collected:
        values = list(row)
        rows.setdefault(tuple(values[:width]), {})[values[width]] = values[width + 1 :]
    return {segment: views.metrics(found) for segment, found in rows.items()}, 1


def _value(
    analyzer: FrequencyAnalyzer, summary: FrequencySummary, extras: Sequence[object]
) -> Metric:
    try:
        return Metric(analyzer, value=analyzer.value_from_frequencies(summary, extras))
    except MetricComputationError as exc:
        return Metric(analyzer, error=str(exc), empty=isinstance(exc, EmptyStateError))
