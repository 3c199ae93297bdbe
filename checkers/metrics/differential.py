"""Metrics from stored states alone: the whole dataset after appends or replaced partitions, or any
chosen set of partitions (a "view"), without re-reading data."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from checkers.metrics import _grouping
from checkers.metrics._analyzer import Analyzer, FrequencyAnalyzer, State
from checkers.metrics._metric import Metric
from checkers.metrics.frequencies import FrequencyState
from checkers.metrics.runner import AnalysisResult
from checkers.metrics.state_stores import StateStore, load_states


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
    chosen = store.partitions(dataset) if partitions is None else list(partitions)
    if not chosen:
        return AnalysisResult(
            {
                a: Metric(a, error=f"{a!r}: dataset {dataset!r} has no stored partitions")
                for a in unique
            }
        )
    states, missing = load_states(store, unique, dataset=dataset, partitions=chosen)
    metrics: dict[Analyzer, Metric] = {a: Metric(a, error=why) for a, why in missing.items()}
    found, actions = metrics_from_states([a for a in unique if a in states], states)
    metrics.update(found)
    return AnalysisResult(
        {a: metrics[a] for a in unique},
        {a: s for a, s in states.items() if not isinstance(s, FrequencyState)},
        actions,
    )


def metrics_from_states(
    analyzers: Sequence[Analyzer], states: Mapping[Analyzer, State]
) -> tuple[dict[Analyzer, Metric], int]:
    """Each analyzer's metric from its (merged) state, and the Spark actions that took: none for
    scan-shareable and sketch states, one aggregation over the frequency tables otherwise."""
    metrics: dict[Analyzer, Metric] = {
        a: a.metric_from_state(states[a]) for a in analyzers if not isinstance(a, FrequencyAnalyzer)
    }
    frequency = [a for a in analyzers if isinstance(a, FrequencyAnalyzer)]
    if not frequency:
        return metrics, 0
    sets = _grouping.plan_sets(frequency)
    layout = _grouping.shared_layout(sets)
    per_set = {s: states[s.analyzers[0]] for s in sets}
    table = _grouping.table_from_states(per_set, layout)  # type: ignore[arg-type]
    found, actions = _grouping.frequency_metrics(table, sets, layout)
    metrics.update(found)
    return metrics, actions
