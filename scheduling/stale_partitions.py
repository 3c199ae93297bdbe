"""Which stored partitions of a drifted incremental check no longer describe their data: every
partition's states recomputed into a scratch store (one grouped pass, as a first run) and each
compared with the stored one by its metrics, exactly or within what the analyzer states a
recomputation may answer. Only those are forgotten, so the next run re-reads only them."""

from __future__ import annotations

import datetime as dt
import math
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

import sqlalchemy as sa

from checkers.checker import CheckerPlan, plan_or_error
from checkers.metrics import Analyzer, Metric
from checkers.metrics.differential import metrics_from_states
from checkers.metrics.partitioned import has_partition_states
from checkers.metrics.state_stores import LoadedState
from checks.base import QualityCheck
from scheduling.schema import migrate
from scheduling.settings import Settings
from scheduling.tick.partition_plans import stored_analyzers
from scheduling.tick.partition_store import PartitionStore


def stale_partitions(
    check: type[QualityCheck],
    store: PartitionStore,
    *,
    now: dt.datetime,
    settings: Settings,
    spark: object | None = None,
) -> list[str]:
    """The stored partitions of `check` whose states differ from the data's now (every stored
    one when the recomputation cannot run: forgetting too much only costs a re-read)."""
    from scheduling.tick.evaluate import load, prepare, run_engine

    known = list(store.known(check.name))
    with tempfile.TemporaryDirectory(prefix="dq-drift-") as directory:
        engine = sa.create_engine(f"sqlite:///{Path(directory) / 'scratch.db'}")
        try:
            migrate(engine)
            scratch = PartitionStore(engine, Path(directory) / "states")
            evaluation = prepare(
                [check],
                spark=spark,  # type: ignore[arg-type]
                now=now,
                deadline_s=settings.source_deadline_s,
                partitions=scratch,
            )
            load(evaluation, parallelism=settings.load_parallelism)
            run_engine(evaluation)
            (item,) = evaluation.items
            planned = plan_or_error(item.checker, None) if item.checker else None
            if item.error or not isinstance(planned, CheckerPlan) or item.result is None:
                return known
            if item.result.error:
                return known
            analyzers = [a for a in stored_analyzers(planned) if has_partition_states(a)]
            mine = store.load(check.name, known, analyzers)
            fresh = scratch.load(check.name, known, analyzers)
            return [
                key
                for key in known
                if key not in fresh or _differ(analyzers, mine.get(key, {}), fresh[key])
            ]
        finally:
            engine.dispose()


def _differ(
    analyzers: Sequence[Analyzer],
    mine: Mapping[Analyzer, LoadedState],
    fresh: Mapping[Analyzer, LoadedState],
) -> bool:
    if set(mine) != set(fresh):
        return True
    present = [a for a in analyzers if a in fresh]
    stored, _ = metrics_from_states(present, [mine])
    again, _ = metrics_from_states(present, [fresh])
    return any(not _same(stored[a], again[a]) for a in present)


def _same(stored: Metric, again: Metric) -> bool:
    if stored.ok != again.ok:
        return False
    if not stored.ok:
        return stored.error == again.error
    a, b = stored.value, again.value
    if isinstance(a, float) and isinstance(b, float) and math.isclose(a, b, rel_tol=1e-9):
        return True
    return a == b or bool(again.agreement and again.agreement.admits(a))
