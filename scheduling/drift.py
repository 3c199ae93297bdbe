"""The drift guard (`dq run --full`): an incremental check's outcome, built from stored partition
states, against a recomputation of the same partitions from scratch in one ordinary pass. A
difference means the stored states no longer describe the data (a change the fingerprints did
not see, or a bug): it is reported, and the stored partitions whose states differ from the data's
are forgotten so that the next run reads them again (`stale_partitions.py`)."""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from checkers.outcome import CheckOutcome
from checks.base import QualityCheck
from scheduling.settings import Settings

#: Metrics from merged exact states equal a recomputation up to the order floats were added in.
EXACT_RELATIVE = 1e-9
_COMPARED = ("status", "level", "failing", "total", "unexcused", "error")


@dataclass(frozen=True)
class DriftReport:
    """One check's comparison: `differences` is empty when the outcomes agree."""

    check: str
    incremental: CheckOutcome
    full: CheckOutcome
    differences: tuple[str, ...]
    #: The stored partitions forgotten because their states differ from the data's.
    forgotten: tuple[str, ...] = ()


def _close(a: object, b: object, relative: float) -> bool:
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        return a.keys() == b.keys() and all(_close(a[k], b[k], relative) for k in a)
    numbers = (int, float)
    if isinstance(a, numbers) and isinstance(b, numbers) and not isinstance(a, bool):
        if math.isnan(a) and math.isnan(b):
            return True
        return math.isclose(a, b, rel_tol=relative, abs_tol=1e-12)
    return a == b


def _agree(key: str, incremental: CheckOutcome, full: CheckOutcome) -> bool:
    """Whether a metric answered by a sketch is within what its analyzer states a recomputation
    may answer: the incremental value within the fresh sketch's bounds, or the fresh value
    within the merged sketch's (each bound is the analyzer's documented error)."""
    a, b = incremental.metrics.get(key), full.metrics.get(key)
    fresh, merged = full.agreements.get(key), incremental.agreements.get(key)
    return bool((fresh and fresh.admits(a)) or (merged and merged.admits(b)))


def differences(incremental: CheckOutcome, full: CheckOutcome) -> list[str]:
    """What differs between two outcomes of one check: counts, status, level, error, metrics
    (exactly, or a sketch's answer within the error its analyzer states: `Analyzer.agreement`)."""
    found = [
        f"{name}: incremental {a!r}, from scratch {b!r}"
        for name in _COMPARED
        if (a := getattr(incremental, name)) != (b := getattr(full, name))
    ]
    for key in sorted(set(incremental.metrics) | set(full.metrics)):
        a, b = incremental.metrics.get(key), full.metrics.get(key)
        if not _close(a, b, EXACT_RELATIVE) and not _agree(key, incremental, full):
            stated = full.agreements.get(key) or incremental.agreements.get(key)
            beyond = f" (beyond {stated.why})" if stated else ""
            found.append(f"metric {key}: incremental {a!r}, from scratch {b!r}{beyond}")
    return found


def guard(
    checks: Sequence[type[QualityCheck]],
    incremental: Sequence[CheckOutcome],
    *,
    now: dt.datetime,
    settings: Settings,
    spark: object | None = None,
) -> list[DriftReport]:
    """Recompute the incremental ones of `checks` (whose recorded outcomes of this run are
    `incremental`) from scratch and compare; a check that drifted forgets its stored partitions
    whose states differ from the data's, and its rollup of frequency tables."""
    from scheduling.stale_partitions import stale_partitions
    from scheduling.tick.evaluate import evaluate_checks

    chosen = [c for c in checks if c.incremental is not None]
    if not chosen:
        return []
    by_name = {o.check: o for o in incremental}
    full = evaluate_checks(
        chosen,
        spark=spark,  # type: ignore[arg-type]
        now=now,
        deadline_s=settings.source_deadline_s,
        parallelism=settings.load_parallelism,
        full=True,
    )
    reports = []
    store = settings.partition_store()
    for check, scratch in zip(chosen, full, strict=True):
        mine = by_name.get(check.name)
        if mine is None:
            continue  # another run held the window: nothing of ours to compare
        found = tuple(differences(mine, scratch))
        stale: list[str] = []
        if found and store is not None:
            stale = stale_partitions(check, store, now=now, settings=settings, spark=spark)
            store.forget(check.name, stale)
            store.forget_rollup(check.name)  # whatever it holds, the next run merges it anew
        reports.append(DriftReport(check.name, mine, scratch, found, tuple(sorted(stale))))
    return reports
