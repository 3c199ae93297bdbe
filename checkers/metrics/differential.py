"""Where states become metrics: the states of several parts of a dataset (partitions stored by
earlier runs, partitions read now) merged into the whole's, and the whole's metrics from them,
without re-reading data. Every caller (views over a store, incremental checks) goes through here."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from functools import reduce

from checkers.metrics import _grouping
from checkers.metrics._analyzer import Analyzer, FrequencyAnalyzer, ScanShareableAnalyzer, State
from checkers.metrics._metric import Metric, MetricSource
from checkers.metrics.frequencies import FrequencyState, StoredTable, merge_frequencies
from checkers.metrics.runner import AnalysisResult
from checkers.metrics.state_stores import LoadedState, StateStore

States = Mapping[Analyzer, LoadedState]


def merge_states(analyzers: Iterable[Analyzer], parts: Iterable[States]) -> dict[Analyzer, State]:
    """Each analyzer's state over all `parts` (its state in each part that has one). Frequency
    tables of every part are merged in one scan. An analyzer no part has a state for gets its
    zero state when it has one (counts, sketches, frequency tables), else is left out."""
    parts = list(parts)
    merged: dict[Analyzer, State] = {}
    for analyzer in dict.fromkeys(analyzers):
        found = [part[analyzer] for part in parts if analyzer in part]
        if isinstance(analyzer, FrequencyAnalyzer):
            tables = [s for s in found if isinstance(s, (FrequencyState, StoredTable))]
            merged[analyzer] = merge_frequencies(tuple(sorted(analyzer.columns)), tables)
        elif states := [s for s in found if not isinstance(s, StoredTable)]:
            merged[analyzer] = reduce(lambda a, b: a.merge(b), states)
        elif isinstance(analyzer, ScanShareableAnalyzer):
            merged[analyzer] = analyzer.zero_state()
    return merged


def metrics_from_states(
    analyzers: Sequence[Analyzer], parts: Iterable[States]
) -> tuple[dict[Analyzer, Metric], int]:
    """Each analyzer's metric over the union of `parts` (one mapping of states per part, e.g.
    per partition; a single part for states merged already), and the Spark actions that took:
    none for scan-shareable and sketch states, one aggregation over every frequency table."""
    if isinstance(parts, Mapping):
        raise TypeError("metrics_from_states takes a list of states per part: [states]")
    unique = list(dict.fromkeys(analyzers))
    frequency = [a for a in unique if isinstance(a, FrequencyAnalyzer)]
    sets = _grouping.plan_sets(frequency) if frequency else []
    others = [a for a in unique if not isinstance(a, FrequencyAnalyzer)]
    # Analyzers of one grouping set share their tables: merge each set's once.
    merged = merge_states([*others, *(s.analyzers[0] for s in sets)], parts)
    metrics: dict[Analyzer, Metric] = {
        a: a.metric_from_state(merged[a])
        if a in merged
        else Metric(a, error=f"{a!r}: not computed")
        for a in others
    }
    if not sets:
        return {a: replace(m, source=MetricSource.STATES) for a, m in metrics.items()}, 0
    layout = _grouping.shared_layout(sets)
    per_set = {s: merged[s.analyzers[0]] for s in sets}
    table = _grouping.table_from_states(per_set, layout)  # type: ignore[arg-type]
    found, actions = _grouping.frequency_metrics(table, sets, layout)
    metrics.update(found)
    return {a: replace(m, source=MetricSource.STATES) for a, m in metrics.items()}, actions


def load_states(
    store: StateStore, analyzers: Iterable[Analyzer], *, dataset: str, partitions: Iterable[str]
) -> tuple[dict[Analyzer, State], dict[Analyzer, str]]:
    """Each analyzer's state merged over the partitions, or why it could not be (missing state)."""
    wanted = list(dict.fromkeys(analyzers))
    chosen = list(partitions)
    return _merged_view(store.load(dataset, wanted, chosen), wanted, dataset, chosen)


def metrics_for_view(
    store: StateStore,
    analyzers: Sequence[Analyzer],
    *,
    dataset: str,
    partitions: Iterable[str] | None = None,
) -> AnalysisResult:
    """Metrics over the given partitions (all stored partitions when None) from their states.

    Scan-shareable and sketch metrics merge in Python and run no Spark job; frequency metrics
    run one aggregation over the stored frequency tables."""
    unique = list(dict.fromkeys(analyzers))
    found = store.load(dataset, unique, None if partitions is None else list(partitions))
    chosen = sorted(found) if partitions is None else list(partitions)
    if not chosen:
        return AnalysisResult(
            {
                a: Metric(a, error=f"{a!r}: dataset {dataset!r} has no stored partitions")
                for a in unique
            }
        )
    states, missing = _merged_view(found, unique, dataset, chosen)
    metrics: dict[Analyzer, Metric] = {a: Metric(a, error=why) for a, why in missing.items()}
    computed, actions = metrics_from_states([a for a in unique if a in states], [states])
    metrics.update(computed)
    return AnalysisResult(
        {a: metrics[a] for a in unique},
        {a: s for a, s in states.items() if not isinstance(s, FrequencyState)},
        actions,
    )


def _merged_view(
    found: Mapping[str, States], wanted: list[Analyzer], dataset: str, chosen: list[str]
) -> tuple[dict[Analyzer, State], dict[Analyzer, str]]:
    """The states of `wanted` merged over `chosen` partitions; an analyzer some partition has no
    state for is missing (why, naming the first such partition)."""
    missing: dict[Analyzer, str] = {}
    for partition in chosen:
        states = found.get(partition, {})
        for analyzer in wanted:
            if analyzer not in states and analyzer not in missing:
                missing[analyzer] = (
                    f"{analyzer!r}: no stored state for dataset {dataset!r} partition "
                    f"{partition!r}; run the analysis on that partition first"
                )
    if not chosen:
        return {}, missing
    complete = [a for a in wanted if a not in missing]
    return merge_states(complete, (found.get(p, {}) for p in chosen)), missing
