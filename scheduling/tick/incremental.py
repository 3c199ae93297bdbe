"""Evaluating incremental checks: read the partitions their plan chose (scheduling/tick/
partition_plans.py), store their states, forget deleted ones, and judge the merge of every
in-scope partition's states."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from checkers.checker import (
    Checker,
    CheckerPlan,
    CheckerResult,
    FullScanChecker,
)
from checkers.errors import describe_failure
from checkers.metric_checker import MetricChecker
from checkers.metrics import (
    Analyzer,
    FrequencyAnalyzer,
    Metric,
    ScanShareableAnalyzer,
    Size,
)
from checkers.metrics.differential import metrics_from_states
from checkers.metrics.partition_drift import metrics_across_partitions
from checkers.metrics.partitioned import analyze_partitions
from checkers.metrics.rollups import Rollup, refresh_beside, rolled_up, save_rollup
from checkers.metrics.segment_states import PerSegment
from checkers.metrics.segments import MAX_SEGMENTS
from checkers.metrics.state_stores import LoadedState
from checkers.parsers import (
    PARTITION_COLUMN,
)
from checks.incremental import partition_order
from scheduling.tick.day_one import backfill_history
from scheduling.tick.partition_plans import PartitionPlan, stored_analyzers
from scheduling.tick.partition_store import PartitionStore

States = Mapping[Analyzer, LoadedState]


@dataclass
class PartitionWork:
    """An incremental check ready to evaluate: its partitions and its checker's plan."""

    partitions: PartitionPlan
    plan: CheckerPlan
    full_scan: FullScanChecker | None = None
    data_schema: str | None = None  # of the data read, kept for runs that read nothing
    checker: Checker | None = None
    #: The full-scan analyzer (text sources), and every analyzer this work computes.
    scan: Analyzer | None = field(init=False)
    analyzers: list[Analyzer] = field(init=False)

    def __post_init__(self) -> None:
        self.scan = self.full_scan.plan().analyzers[0] if self.full_scan else None
        extra = [self.scan] if self.scan else []
        self.analyzers = list(dict.fromkeys([*stored_analyzers(self.plan), *extra]))


def evaluate_partitions(
    works: Sequence[PartitionWork], store: PartitionStore
) -> list[CheckerResult]:
    """Results of incremental checks, in order. Plans over the same data share one grouped pass
    for their counts, moments and sketches; each check's frequency tables are its own."""
    fresh: dict[int, dict[str, dict[Analyzer, LoadedState]]] = {i: {} for i in range(len(works))}
    errors: dict[int, dict[Analyzer, str]] = {i: {} for i in range(len(works))}
    actions = dict.fromkeys(range(len(works)), 0)
    rollups: dict[int, Rollup] = {i: {} for i in range(len(works))}
    by_frame: dict[int, list[int]] = {}
    for i, work in enumerate(works):
        if work.partitions.changed:
            by_frame.setdefault(id(work.plan.frame), []).append(i)
    for indexes in by_frame.values():
        _read_changed(works, indexes, store, fresh, errors, actions, rollups)
    return [
        _finish(work, fresh[i], errors[i], actions[i], rollups[i], store)
        for i, work in enumerate(works)
    ]


def _read_changed(
    works: Sequence[PartitionWork],
    indexes: list[int],
    store: PartitionStore,
    fresh: dict[int, dict[str, dict[Analyzer, LoadedState]]],
    errors: dict[int, dict[Analyzer, str]],
    actions: dict[int, int],
    rollups: dict[int, Rollup],
) -> None:
    frame = works[indexes[0]].plan.frame  # grouped by it: the same object for every member
    assert frame is not None  # a plan without data is no incremental work
    keys = list(dict.fromkeys(p.key for i in indexes for p in works[i].partitions.changed))
    shared = [
        a
        for i in indexes
        for a in works[i].analyzers
        if isinstance(a, (ScanShareableAnalyzer, PerSegment))
    ]
    caps = [w.plan.segmented.max_segments for i in indexes if (w := works[i]).plan.segmented]
    cap = max(caps, default=MAX_SEGMENTS)  # each work judges its own cap after the merge
    try:
        scan = analyze_partitions(frame, shared, keys, column=PARTITION_COLUMN, max_segments=cap)
    except Exception as exc:
        for i in indexes:
            errors[i] = dict.fromkeys(works[i].analyzers, describe_failure(exc))
        return
    actions[indexes[0]] += scan.spark_actions
    for i in indexes:
        work = works[i]
        wanted = set(work.analyzers)
        own = [a for a in work.analyzers if isinstance(a, FrequencyAnalyzer)]
        mine = {p.key for p in work.partitions.changed}
        fresh[i] = {
            k: {a: s for a, s in states.items() if a in wanted}
            for k, states in scan.states.items()
            if k in mine
        }
        errors[i] = {a: e for a, e in scan.errors.items() if a in wanted}
        if not own:
            continue
        name = work.partitions.check.name
        try:  # a due rollup is written by the job that writes the new tables: no job of its own
            rollup = refresh_beside(own, work.partitions.stored, mine, store.states, name)
        except Exception:  # a cache: without a new one the merge reads the tables it lacks
            rollup = None
        try:
            found = analyze_partitions(
                frame,
                own,
                sorted(mine),
                column=PARTITION_COLUMN,
                state_store=store.states,
                dataset=name,
                rollup=rollup,
            )
        except Exception as exc:
            errors[i].update(dict.fromkeys(own, describe_failure(exc)))
            continue
        actions[i] += found.spark_actions
        errors[i].update(found.errors)
        rollups[i] = found.rollup
        for key, states in found.states.items():
            fresh[i].setdefault(key, {}).update(states)


def _finish(
    work: PartitionWork,
    fresh: dict[str, dict[Analyzer, LoadedState]],
    errors: dict[Analyzer, str],
    actions: int,
    rollup: Rollup,
    store: PartitionStore,
) -> CheckerResult:
    partitions = work.partitions
    check = partitions.check
    if work.full_scan is not None and work.scan in errors:
        return work.full_scan.malformed(errors[work.scan])
    analyzers = stored_analyzers(work.plan)
    if not errors:  # a partition is committed only when all its states were computed
        try:
            for partition in partitions.changed:
                states = {a: s for a, s in fresh[partition.key].items() if a in analyzers}
                rows = states.get(Size())
                store.save(
                    check.name,
                    partition.key,
                    states,
                    fingerprint=partition.fingerprint,
                    definition=partitions.definition,
                    rows=getattr(rows, "num_matches", None),
                    partition_ts=partition.ts,
                    data_schema=work.data_schema,
                )
            store.forget(check.name, partitions.dropped)
            _record_partitions(work, fresh, analyzers)
            if rollup:  # after the tables it names are stored: else it is not used
                save_rollup(store.states, check.name, rollup)
        except Exception as exc:  # the states cannot be kept: say so, never judge half a dataset
            return CheckerResult.failed_to_run(
                f"storing the states of {check.name}'s partitions failed: {describe_failure(exc)}"
            )
    if (segmented := work.plan.segmented) is not None:
        try:
            parts, more = _merged_parts(work, segmented.frequencies, fresh, errors, store)
        except Exception as exc:
            return CheckerResult.failed_to_run(describe_failure(exc))
        judged = segmented.judge_states(parts, errors)
        judged.spark_actions += actions + more
        judged.reading = _reading(partitions, fresh)
        return judged
    metrics: dict[Analyzer, Metric] = {a: Metric(a, error=e) for a, e in errors.items()}
    computable = [a for a in analyzers if a not in metrics]
    try:
        folded, more = _merged_parts(work, computable, fresh, errors, store)
        found, merging = metrics_from_states(computable, folded)
        more += merging
    except Exception as exc:
        found, more = {a: Metric(a, error=describe_failure(exc)) for a in computable}, 1
    metrics.update(found)
    ordered = sorted(partitions.scope, key=partition_order)  # oldest first: the newest compared
    parts = [fresh.get(p.key) or partitions.stored.get(p.key) or {} for p in ordered]
    metrics.update(metrics_across_partitions(computable, parts))
    result = work.plan.finish(metrics)
    result.spark_actions = actions + more
    result.reading = _reading(partitions, fresh)
    return result


def _merged_parts(
    work: PartitionWork,
    analyzers: Sequence[Analyzer],
    fresh: dict[str, dict[Analyzer, LoadedState]],
    errors: dict[Analyzer, str],
    store: PartitionStore,
) -> tuple[list[States], int]:
    """The parts whose states merge into the check's: the stable partitions' frequency tables
    from the check's rollup, the rest table by table; and the Spark actions that took."""
    partitions = work.partitions
    parts, actions, _ = rolled_up(
        analyzers,
        {**partitions.stored, **fresh},
        store.states,
        partitions.check.name,
        read_now=fresh,
        may_refresh=not errors,
    )
    return parts, actions


def _reading(partitions: PartitionPlan, fresh: Mapping[str, States]) -> dict[str, int]:
    read = sum(getattr(fresh[p.key].get(Size()), "num_matches", 0) for p in partitions.changed)
    return {
        "rows_read": read,
        "partitions_read": len(partitions.changed),
        "partitions": len(partitions.scope),
    }


def _record_partitions(
    work: PartitionWork,
    fresh: Mapping[str, Mapping[Analyzer, LoadedState]],
    analyzers: list[Analyzer],
) -> None:
    """A metric checker with a history saves each new partition's own metrics there (Wikimedia's
    partition_id and partition_ts), and judges per-partition anomalies on the newest one."""
    checker = work.checker
    history = getattr(checker, "history", None)
    if not isinstance(checker, MetricChecker) or history is None or not history.save:
        return
    if work.plan.segmented is not None:  # each segment's history is of whole runs only
        return
    backfill_history(checker, work.partitions.scope, work.partitions.stored)
    newest = None
    for partition in sorted(work.partitions.changed, key=partition_order):
        states = fresh[partition.key]
        metrics, _ = metrics_from_states([a for a in analyzers if a in states], [states])
        history.record_partition(partition.key, partition.ts, metrics.values())
        newest = (partition, metrics)
    if newest is not None:
        partition, metrics = newest
        checker.history = history.with_partition(partition.key, partition.ts, metrics)
