"""Day-one history for anomaly checks on incremental sources: a per-partition anomaly constraint
needs one metric per earlier partition, and an incremental check already stores each partition's
analyzer states. The partitions the history lacks get their metrics from those states (a view:
no data is read, no Spark job for counts, moments and sketches), so the check judges the newest
partition against every earlier one from its first run."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from checkers.metric_checker import MetricChecker
from checkers.metrics import Analyzer, FrequencyAnalyzer
from checkers.metrics.annotations import SeriesPoint
from checkers.metrics.check import AnomalySpec
from checkers.metrics.differential import metrics_from_states
from checkers.metrics.state_stores import LoadedState
from checkers.parsers import Partition
from checkers.project_db import as_utc
from checks.incremental import partition_order
from scheduling.tick.partition_store import PartitionStore


def per_partition_analyzers(checker: MetricChecker) -> list[Analyzer]:
    """The analyzers per-partition anomaly constraints judge whose metrics come from states
    without a Spark job (frequency tables would need one: their history builds run by run)."""
    return list(
        dict.fromkeys(
            c.analyzer
            for c in checker.constraints
            if isinstance(c.anomaly, AnomalySpec)
            and c.anomaly.per_partition
            and not isinstance(c.analyzer, FrequencyAnalyzer)
        )
    )


def backfill_history(
    checker: MetricChecker,
    scope: Sequence[Partition],
    stored: Mapping[str, Mapping[Analyzer, LoadedState]],
) -> int:
    """Record, for each stored partition of `scope` whose metrics the history lacks, its metrics
    from its stored states; returns how many partitions were added."""
    history = checker.history
    analyzers = per_partition_analyzers(checker)
    if history is None or not history.save or not analyzers or not stored:
        return 0
    known: set[str | None] | None = None  # partitions every judged analyzer has a point for
    for analyzer in analyzers:
        rows = history.repository.query(
            source_table=history.source_table,
            analyzer=analyzer,
            per_partition=True,
            tags=history.key.tags,
        )
        found = {r.partition_id for r in rows}
        known = found if known is None else known & found
    added = 0
    for partition in sorted(scope, key=partition_order):
        states = stored.get(partition.key)
        if states is None or partition.key in (known or set()):
            continue
        wanted = [a for a in analyzers if a in states]
        metrics, _ = metrics_from_states(wanted, [states])
        if history.record_partition(partition.key, partition.ts, metrics.values()):
            added += 1
    return added


def day_one_points(
    checker: MetricChecker,
    check: str,
    store: PartitionStore,
    analyzer: Analyzer,
    tags: dict[str, str],
) -> list[SeriesPoint]:
    """The per-partition points of `analyzer`, from stored states, of the stored partitions of
    `check` its history lacks (for `dq backtest`: nothing is saved, no data is read)."""
    history = checker.history
    if history is None or isinstance(analyzer, FrequencyAnalyzer):
        return []
    rows = history.repository.query(
        source_table=history.source_table, analyzer=analyzer, per_partition=True, tags=tags
    )
    have = {r.partition_id for r in rows}
    known = store.known(check)
    missing = [k for k in known if k not in have]
    points = []
    for key, states in store.load(check, missing, [analyzer]).items():
        time = known[key].partition_ts or known[key].updated_at
        if analyzer not in states or time is None:
            continue
        metrics, _ = metrics_from_states([analyzer], [states])
        value = metrics[analyzer].value
        if metrics[analyzer].ok and isinstance(value, int | float):
            points.append(SeriesPoint(as_utc(time), float(value)))
    return points
