"""States per partition in one engine run: the scan-shareable analyzers aggregate once, grouped by
a partition column, so a run over k new partitions reads each of their rows once; frequency
tables of all partitions come from one query too, each partition's part stored as its own table
(`_partition_tables.py`). States can then be stored per
partition and merged with those of partitions read earlier (the differential model)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from checkers.metrics import _grouping
from checkers.metrics._analyzer import (
    Analyzer,
    FrequencyAnalyzer,
    OwnPassAnalyzer,
    ScanShareableAnalyzer,
)
from checkers.metrics._partition_tables import movable, write_partition_tables
from checkers.metrics._scan import run_scan
from checkers.metrics.rollups import PendingRollup, Rollup
from checkers.metrics.runner import (
    SketchPlan,
    _reads_columnar_files,
    _run_grouping,
    _scan_passes,
    frequency_tables,
    split_by_schema,
)
from checkers.metrics.segment_states import PerSegment, partition_segment_states, whole_of
from checkers.metrics.segments import MAX_SEGMENTS
from checkers.metrics.standalone import QueryAnalyzer, SchemaAnalyzer
from checkers.metrics.state_stores import FrequencyTableStore, LoadedState


def has_partition_states(analyzer: Analyzer) -> bool:
    """Whether `analyzer` keeps a state per partition that merges into the whole's: not a query
    (`CustomSql`) nor a model scored on the data as a whole (`Predictability`)."""
    return not isinstance(analyzer, (OwnPassAnalyzer, QueryAnalyzer))


@dataclass
class PartitionedAnalysis:
    """Each partition's states (every requested partition present, zero states when it has no
    rows; frequency tables stored by one query left unopened), the analyzers that could not be
    computed and why, the Spark actions taken, and the rollup written beside the frequency
    tables (its states, for the caller to save after the partitions'; {} when none was)."""

    states: dict[str, dict[Analyzer, LoadedState]]
    errors: dict[Analyzer, str] = field(default_factory=dict)
    spark_actions: int = 0
    rollup: Rollup = field(default_factory=dict)


def analyze_partitions(
    df: DataFrame,
    analyzers: Sequence[Analyzer],
    partitions: Sequence[str],
    *,
    column: str,
    state_store: FrequencyTableStore | None = None,
    dataset: str | None = None,
    sketch_plan: SketchPlan = SketchPlan.AUTO,
    max_segments: int = MAX_SEGMENTS,
    rollup: PendingRollup | None = None,
) -> PartitionedAnalysis:
    """States of `analyzers` for each of `partitions`, whose rows are those of `df` where the
    string `column` equals the partition. With `state_store` and `dataset`, frequency tables are
    written where the store keeps that partition's states (the caller saves the states), and
    `rollup` in the same Spark job when the store is local (`result.rollup`).

    `PerSegment` analyzers are computed grouped by partition and segment (at most
    `max_segments` segments per partition); an analyzer also asked for per segment gets its
    partition's state merged from its segments' (no pass of its own)."""
    if state_store is not None and dataset is None:
        raise ValueError("storing frequency tables needs dataset=")
    runnable, problems = split_by_schema(list(dict.fromkeys(analyzers)), df.schema)
    result = PartitionedAnalysis({p: {} for p in partitions}, problems)
    for own in (a for a in runnable if isinstance(a, OwnPassAnalyzer)):
        result.errors[own] = f"{own!r} is computed by run_analysis, not per partition"
    columnar = _reads_columnar_files(df)
    scan = [a for a in runnable if isinstance(a, ScanShareableAnalyzer)]
    if per_segment := [a for a in runnable if isinstance(a, PerSegment)]:
        scan = _segment_states(df, per_segment, scan, result, column, sketch_plan, max_segments)
    for group in _scan_passes(scan, sketch_plan, columnar):
        outcome = run_scan(df, group, by=column)
        result.spark_actions += outcome.actions
        result.errors.update(dict(outcome.errors.items()))
        for partition, found in result.states.items():
            states = outcome.grouped.get(partition, {})
            for analyzer in group:
                if analyzer not in outcome.errors:
                    found[analyzer] = (
                        states[analyzer] if analyzer in states else analyzer.zero_state()
                    )
    for other in runnable:  # partitions share the schema; a query reads the data whole
        if isinstance(other, SchemaAnalyzer):
            for found in result.states.values():
                found[other] = other.state_from_schema(df.schema)
        elif isinstance(other, QueryAnalyzer):
            result.errors[other] = f"{other!r}: a query analyzer has no per-partition state"
    frequency = [a for a in runnable if isinstance(a, FrequencyAnalyzer)]
    if frequency:
        _frequency_states(df, frequency, result, column, state_store, dataset, columnar, rollup)
    return result


def _segment_states(
    df: DataFrame,
    analyzers: list[PerSegment],
    scan: list[ScanShareableAnalyzer],
    result: PartitionedAnalysis,
    column: str,
    sketch_plan: SketchPlan,
    max_segments: int,
) -> list[ScanShareableAnalyzer]:
    """Adds the states of `analyzers` to `result`, and those of the `scan` analyzers that merge
    from their segments'; returns the scan analyzers still to compute by partition."""
    columnar = _reads_columnar_files(df)
    inner = list(dict.fromkeys(a.analyzer for a in analyzers))
    partition_segment_states(
        df,
        analyzers,
        result,
        column=column,
        passes=_scan_passes(inner, sketch_plan, columnar),
        max_segments=max_segments,
    )
    merged: dict[ScanShareableAnalyzer, PerSegment] = {}
    for analyzer in (a for a in scan if not a.is_sketch):  # exact: counts, sums, extremes
        twin = next((a for a in analyzers if a.analyzer == analyzer), None)
        if twin is not None and twin not in result.errors:
            merged[analyzer] = twin
    for partition, states in result.states.items():
        for analyzer, twin in merged.items():
            result.states[partition][analyzer] = whole_of(states[twin], analyzer)  # type: ignore[arg-type]
    return [a for a in scan if a not in merged]


def _frequency_states(
    df: DataFrame,
    analyzers: list[FrequencyAnalyzer],
    result: PartitionedAnalysis,
    column: str,
    store: FrequencyTableStore | None,
    dataset: str | None,
    columnar: bool,
    rollup: PendingRollup | None,
) -> None:
    """Each partition's frequency tables: from one query and one job when stored locally (else
    one job per partition), `rollup` written by that job too. Their metrics are left to the
    merge; a query that fails is retried through the runner, which tells the analyzers with bad
    filters apart (and writes no rollup)."""
    sets = _grouping.plan_sets(analyzers)
    layout = _grouping.run_layout(df.schema, sets)
    stack = _grouping.COLUMNAR_STACK if columnar else None
    if store is not None and dataset is not None and (len(result.states) > 1 or rollup is not None):
        locations = {p: store.frequency_location(dataset, p) for p in result.states}
        if movable([*locations.values(), *([rollup.location] if rollup else [])]):
            try:
                tables, result.rollup = write_partition_tables(
                    df,
                    sets,
                    layout,
                    column=column,
                    locations=locations,
                    stack_size=stack,
                    rollup=rollup,
                )
            except Exception:  # told apart partition by partition below
                result.spark_actions += 1
            else:
                result.spark_actions += 1
                for partition, unopened in tables.items():
                    for s in sets:
                        for analyzer in s.analyzers:
                            result.states[partition][analyzer] = unopened[s]
                return
    for partition, found in result.states.items():
        rows = df if len(result.states) == 1 else df.where(F.col(column) == F.lit(partition))
        location = store.frequency_location(dataset, partition) if store and dataset else None
        try:
            _, per_set, actions = frequency_tables(rows, sets, layout, location, stack)
        except Exception:
            metrics, states, actions = _run_grouping(rows, analyzers, {}, location, columnar)
            result.spark_actions += actions + 1
            for analyzer in analyzers:
                if analyzer in states:
                    found[analyzer] = states[analyzer]
                else:
                    result.errors[analyzer] = metrics[analyzer].error or "not computed"
            continue
        result.spark_actions += actions
        for s in sets:
            for analyzer in s.analyzers:
                found[analyzer] = per_set[s]
