"""Running checks: load each distinct source once, run all checkers (those over the same
DataFrame share one engine pass), and turn each result into a `CheckOutcome` through the check's
tolerance and alert levels. A broken check becomes an ERROR outcome; the others still run."""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from pyspark.sql import DataFrame, SparkSession

from checkers._checker import (
    CONFIGURATION_ERROR,
    Checker,
    CheckerResult,
    FullScanChecker,
    plan_or_error,
    run_checkers,
)
from checkers.deadlines import DEFAULT_DEADLINE_S
from checkers.levels import AlertLevel
from checkers.outcome import CheckOutcome, Status
from checkers.parsers import PARTITION_COLUMN, Parser
from checkers.project_db import utc_now
from checkers.redaction import redact_values
from checkers.shipping import ship_checks
from checkers.spark import spark_session
from checkers.tolerances import FailureCounts
from checks.base import QualityCheck
from checks.incremental_run import (
    PartitionPlan,
    PartitionWork,
    evaluate_partitions,
    incremental_problem,
    prepare,
    stable_checker,
)
from checks.loading import DEFAULT_PARALLELISM, Loaded, load_sources
from checks.partition_store import PartitionStore

EMPTY_DATASET = "empty dataset: no rows to check (set allow_empty = True if that is fine)"

Data = DataFrame | Mapping[str, DataFrame]


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


@dataclass
class _Pending:
    check: type[QualityCheck]
    instance: QualityCheck
    timings: dict[str, float] = field(default_factory=dict)
    sources: dict[str, Parser] = field(default_factory=dict)
    checker: Checker | None = None
    error: str | None = None
    partitions: PartitionPlan | None = None  # an incremental check's partitions this run


def _describe(exc: Exception) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


def _load_sources(
    pending: list[_Pending], spark: SparkSession, *, deadline_s: float, parallelism: int
) -> dict[Parser, Loaded]:
    """Each distinct parser loaded once, concurrently, each within its deadline."""
    parsers = [parser for item in pending for parser in item.sources.values()]
    return load_sources(parsers, spark, deadline_s=deadline_s, parallelism=parallelism)


def _build_checker(item: _Pending, data: Data) -> None:
    try:
        item.checker = item.instance.checker(data)  # type: ignore[arg-type]
    except Exception as exc:  # a bug in the check's own code: report it, keep the others going
        item.error = f"building the checker failed: {_describe(exc)}"
    if isinstance(item.checker, Checker):
        item.checker.sample_size = item.check.sample_size  # sampled in the engine's pass
        if item.partitions is not None:
            stable_checker(item.checker, item.check)


def _prepare_partitions(
    item: _Pending, spark: SparkSession, store: PartitionStore | None, deadline_s: float
) -> None:
    """For an incremental check: which partitions to read; its source becomes those only."""
    prepared = prepare(item.check, item.instance, item.sources, spark, store, deadline_s=deadline_s)
    if isinstance(prepared, str):
        item.error = prepared
    else:
        item.partitions = prepared
        item.sources = {"data": prepared.reader}


def evaluate_checks(
    checks: Sequence[type[QualityCheck]],
    *,
    spark: SparkSession | None = None,
    now: dt.datetime | None = None,
    data: Mapping[str, Data] | None = None,
    deadline_s: float = DEFAULT_DEADLINE_S,
    parallelism: int = DEFAULT_PARALLELISM,
    partitions: PartitionStore | None = None,
    full: bool = False,
) -> list[CheckOutcome]:
    """Outcomes of `checks`, in order. `data` maps check names to ready data (tests), bypassing
    their parsers. Sources load `parallelism` at a time; one still loading after `deadline_s` (or
    its parser's own `deadline_s`) is an ERROR for every check reading it. With `partitions`,
    incremental checks read only new and changed partitions (without it, everything); with
    `full`, they read every partition in their scope and judge it in one ordinary pass, leaving
    stored states alone (the drift guard of `dq run --full`)."""
    started_at = now or utc_now()
    session = spark or SparkSession.getActiveSession() or spark_session()
    ship_checks(session, [check.__module__ for check in checks])  # Python predicates' modules
    given = dict(data or {})
    pending = [_Pending(check, check(now=started_at)) for check in checks]
    for item in pending:
        if item.check.name in given:
            continue
        try:
            item.sources = item.instance.sources()
        except Exception as exc:
            item.error = f"building the sources failed: {_describe(exc)}"
        if item.error is None and item.check.incremental and (partitions or full):
            _prepare_partitions(item, session, None if full else partitions, deadline_s)
    loaded = _load_sources(
        [p for p in pending if p.check.name not in given],
        session,
        deadline_s=deadline_s,
        parallelism=parallelism,
    )
    for item in pending:
        if item.check.name in given:
            _build_checker(item, given[item.check.name])
        elif item.error is None:
            _attach_sources(item, loaded)
    # Text sources also get a scan of every column, shared with checkers over the raw DataFrame.
    scans = {
        parser: FullScanChecker(source.frame, parser.describe())
        for parser, source in loaded.items()
        if source.frame is not None and parser.needs_full_scan
    }
    incremental = [p for p in pending if p.checker is not None and p.partitions and not full]
    chosen = {id(p) for p in incremental}
    runnable = [p for p in pending if p.checker is not None and id(p) not in chosen]
    work = [(p.checker, p.check.tolerance) for p in runnable] + [(s, None) for s in scans.values()]
    started = time.perf_counter()
    results = run_checkers(work)  # type: ignore[arg-type]
    if incremental:
        assert partitions is not None
        results[len(runnable) : len(runnable)] = _run_incremental(incremental, loaded, partitions)
        runnable += incremental
    elapsed = time.perf_counter() - started
    malformed = {
        parser: r.error
        for parser, r in zip(scans, results[len(runnable) :], strict=True)
        if r.error
    }
    by_check = {id(p): r for p, r in zip(runnable, results[: len(runnable)], strict=True)}
    outcomes = []
    for item in pending:
        item.timings["evaluate_s"] = elapsed if id(item) in by_check else 0.0
        result = by_check.get(id(item)) or CheckerResult.failed_to_run(item.error or "not run")
        broken = [malformed[p] for p in item.sources.values() if p in malformed]
        if broken:  # the source is the cause: its reason names the file and the record
            result = CheckerResult.failed_to_run(broken[0])
        if item.partitions is not None and full and result.rows is not None:
            scope = len(item.partitions.scope)
            result.reading = {
                "rows_read": result.rows,
                "partitions_read": scope,
                "partitions": scope,
            }
        outcomes.append(_outcome(item, result, started_at))
    return outcomes


def _run_incremental(
    items: Sequence[_Pending], loaded: Mapping[Parser, Loaded], store: PartitionStore
) -> list[CheckerResult]:
    results: list[CheckerResult | None] = [None] * len(items)
    works, slots = [], []
    for n, item in enumerate(items):
        assert item.partitions is not None and item.checker is not None
        planned = plan_or_error(item.checker, item.check.tolerance)
        problem = incremental_problem(item.checker, item.partitions.columns)
        if isinstance(planned, CheckerResult):
            results[n] = planned
        elif problem or PARTITION_COLUMN not in planned.frame.columns:
            results[n] = CheckerResult.failed_to_run(
                f"{CONFIGURATION_ERROR}{problem or 'the checker dropped ' + PARTITION_COLUMN}"
            )
        else:
            base = item.partitions.base
            frame = loaded[item.partitions.reader].frame
            scan = (
                FullScanChecker(frame, base.describe())
                if base.needs_full_scan and frame is not None
                else None
            )
            schema = frame.schema.json() if frame is not None else None
            work = PartitionWork(item.partitions, planned, scan, schema, item.checker)
            works.append(work)
            slots.append(n)
    for n, result in zip(slots, evaluate_partitions(works, store), strict=True):
        results[n] = result
    return [r for r in results if r is not None]


def _attach_sources(item: _Pending, loaded: Mapping[Parser, Loaded]) -> None:
    sources = [loaded[parser] for parser in item.sources.values()]
    if sources:  # loaded concurrently: from the first start to the last end
        span = max(s.finished for s in sources) - min(s.started for s in sources)
        item.timings["load_s"] = span
    frames: dict[str, DataFrame] = {}
    for name, parser in item.sources.items():
        source = loaded[parser]
        if source.frame is None:
            item.error = source.error
            return
        frames[name] = source.frame
    _build_checker(item, frames if item.instance.takes_mapping() else frames["data"])


MASK = "***"


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


def _outcome(item: _Pending, result: CheckerResult, started_at: dt.datetime) -> CheckOutcome:
    check = item.check
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
        key_columns = {k.lower() for k in getattr(item.checker, "key", ())}
        if not key_columns & {c.lower() for c in check.masked_columns}:
            keys = result.failing_keys()
        item.timings["sample_s"] = time.perf_counter() - began
    finished_at = started_at + dt.timedelta(seconds=sum(item.timings.values()))
    return CheckOutcome(
        check=check.name,
        status=status,
        level=level,
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
        reading=result.reading or ({"rows_read": result.rows} if result.rows is not None else {}),
        started_at=started_at,
        finished_at=finished_at,
        timings=dict(item.timings),
        owner=check.owner,
        tags=tuple(check.tags),
    )


def evaluate_check(
    check: type[QualityCheck],
    *,
    spark: SparkSession | None = None,
    now: dt.datetime | None = None,
    data: Data | None = None,
) -> CheckOutcome:
    """The outcome of one check (with `data`, its parser is bypassed)."""
    given = None if data is None else {check.name: data}
    return evaluate_checks([check], spark=spark, now=now, data=given)[0]
