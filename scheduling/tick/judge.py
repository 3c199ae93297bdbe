"""Judging: a checker's result becomes the check's `CheckOutcome` through its tolerance and alert
levels (status, level, error), with its failing sample masked where the check says so."""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Mapping, Sequence

from checkers.checker import Checker, CheckerResult
from checkers.levels import AlertLevel, level_reason
from checkers.outcome import CheckOutcome, Status
from checkers.redaction import redact_values
from checkers.tolerances import FailureCounts
from checks.base import QualityCheck

EMPTY_DATASET = "empty dataset: no rows to check (set allow_empty = True if that is fine)"
MASK = "***"


def decide(
    check: type[QualityCheck], result: CheckerResult
) -> tuple[Status, AlertLevel, str | None]:
    """Status, level and error of a checker result under the check's tolerance and levels."""
    if result.error is not None:
        return Status.ERROR, check.error_level, result.error
    if result.rows == 0:
        if check.allow_empty:
            return Status.PASSED, AlertLevel.OK, None
        return Status.ERROR, check.error_level, EMPTY_DATASET
    if result.failing == 0:
        return Status.PASSED, AlertLevel.OK, None
    counts = FailureCounts(result.failing, result.total, result.unexcused)
    if check.tolerance.accepts(counts):
        return Status.TOLERATED, AlertLevel.OK, None
    level = check.alert_level.level(result.unexcused, result.total)
    return Status.FAILED, max(level, AlertLevel.WARNING), None


def level_set_by(
    check: type[QualityCheck], status: Status, level: AlertLevel, result: CheckerResult
) -> str:
    """Which threshold set the level (`CheckOutcome.level_reason`): the check's `alert_level`
    for a failure, its `error_level` when it could not run; empty when no level is set."""
    if status is Status.ERROR:
        return f"{level.name}: error_level, the level of a check that could not run"
    if status is not Status.FAILED:
        return ""
    why = level_reason(check.alert_level, result.unexcused, result.total)
    if not why.startswith(f"{level.name}:"):  # a policy answered OK for a failure
        return f"{level.name}: at least WARNING for a failure ({why})"
    return why


def mask(row: Mapping[str, object], columns: Sequence[str]) -> dict[str, object]:
    """`row` with the values of `columns` replaced, in nested structs too (`left`, `previous`)."""
    if not columns:
        return dict(row)
    hidden = {c.lower() for c in columns}
    return {
        k: MASK if k.lower() in hidden else mask(v, columns) if isinstance(v, Mapping) else v
        for k, v in row.items()
    }


def _mask_sample_row(row: Mapping[str, object], columns: Sequence[str]) -> dict[str, object]:
    masked = mask(row, columns)
    for key in ("sample_error", "reason"):  # error text: why the sample or a metric is missing
        text = masked.get(key)
        if columns and isinstance(text, str):
            masked[key] = redact_values(text)
    return masked


def judge(
    check: type[QualityCheck],
    checker: Checker | None,
    result: CheckerResult,
    *,
    started_at: dt.datetime,
    timings: Mapping[str, float],
) -> CheckOutcome:
    """The check's outcome of `result`. A FAILED outcome fetches its failing sample and keys
    (masked columns withheld; `sample_s` joins its timings); every other status costs no Spark
    work. `finished_at` is `started_at` (the tick's time) plus the check's timings."""
    spent = dict(timings)
    status, level, error = decide(check, result)
    if error is not None and check.masked_columns:
        # A cast or parse error quotes the value it choked on, from whichever column: with
        # masked columns, every value in the message is withheld (see redact_values).
        error = redact_values(error)
    sample: list[dict[str, object]] = []
    keys: list[object] = []
    distinct = result.keys_distinct if status in (Status.FAILED, Status.TOLERATED) else None
    if status is Status.FAILED:
        began = time.perf_counter()
        sample = [
            _mask_sample_row(row, check.masked_columns) for row in result.sample(check.sample_size)
        ]
        key_columns = {k.lower() for k in getattr(checker, "key", ())}
        if not key_columns & {c.lower() for c in check.masked_columns}:
            keys = result.failing_keys()
        spent["sample_s"] = time.perf_counter() - began
    return CheckOutcome(
        check=check.name,
        status=status,
        level=level,
        level_reason=level_set_by(check, status, level, result),
        failing=result.failing,
        total=result.total,
        unexcused=result.unexcused,
        error=error,
        description=check.description,
        tolerance=check.tolerance.describe(),
        sample=tuple(sample),
        failing_keys=tuple(tuple(k) if isinstance(k, list) else k for k in keys),
        failing_keys_distinct=distinct[0] if distinct else None,
        failing_keys_approximate=bool(distinct and not distinct[1]),
        metrics=dict(result.metrics),
        agreements=dict(result.agreements),
        metric_sources=dict(result.metric_sources),
        reading=result.reading or ({"rows_read": result.rows} if result.rows is not None else {}),
        started_at=started_at,
        finished_at=started_at + dt.timedelta(seconds=sum(spent.values())),
        timings=spent,
        owner=check.owner,
        tags=tuple(check.tags),
    )
