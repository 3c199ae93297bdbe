"""Evaluating checks, in the steps the tick names as its stages (scheduling/tick/pipeline.py):
`prepare` each check (its instance, its sources, an incremental check's partitions to read),
`load` each distinct source once, `run_engine` (checkers over the same data share one engine
pass), `judge_all` (outcomes). `evaluate_checks` runs the four in a row. A broken check becomes an
ERROR outcome; the others still run."""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from pyspark.sql import DataFrame, SparkSession

from checkers.cancellation import job_tag, tagged
from checkers.checker import (
    CONFIGURATION_ERROR,
    Checker,
    CheckerResult,
    FullScanChecker,
    not_a_checker,
    plan_or_error,
    run_checkers,
)
from checkers.deadlines import DEFAULT_DEADLINE_S
from checkers.outcome import CheckOutcome
from checkers.parsers import PARTITION_COLUMN, Parser
from checkers.project_db import utc_now
from checkers.schema_checker import SchemaChecker
from checkers.shipping import ship_checks
from checkers.spark import spark_session
from checks.base import QualityCheck
from scheduling.tick.anomaly_feedback import attach_feedback
from scheduling.tick.incremental import PartitionWork, evaluate_partitions
from scheduling.tick.judge import EMPTY_DATASET, decide, judge, mask
from scheduling.tick.partition_plans import (
    PartitionPlan,
    incremental_problem,
    stable_checker,
)
from scheduling.tick.partition_plans import (
    prepare as prepare_partitions,
)
from scheduling.tick.partition_store import PartitionStore
from scheduling.tick.passes import EnginePass, passes_of
from scheduling.tick.sources import DEFAULT_PARALLELISM, Loaded, load_sources

__all__ = [
    "EMPTY_DATASET",
    "Evaluation",
    "decide",
    "evaluate_check",
    "evaluate_checks",
    "load",
    "mask",
    "prepare",
    "run_engine",
]

Data = DataFrame | Mapping[str, DataFrame]


@dataclass
class Pending:
    """One check on its way to an outcome."""

    check: type[QualityCheck]
    instance: QualityCheck
    timings: dict[str, float] = field(default_factory=dict)
    sources: dict[str, Parser] = field(default_factory=dict)
    checker: Checker | None = None
    error: str | None = None
    #: The error came from the check's own code (its sources or checker could not be built)
    by_definition: bool = False
    partitions: PartitionPlan | None = None  # an incremental check's partitions this run
    result: CheckerResult | None = None
    given: Data | None = None  # ready data (tests), bypassing the check's parsers
    mutes: Sequence[object] = ()  # the settings' mutes: maintenance windows shape anomaly training


@dataclass
class Evaluation:
    """The checks of one tick between stages: what each reads, its checker and its result."""

    items: list[Pending]
    session: SparkSession
    started_at: dt.datetime
    deadline_s: float
    partitions: PartitionStore | None = None
    full: bool = False
    #: Metrics from file statistics where exact (off: `dq run --no-metadata`)
    use_metadata: bool = True
    loaded: dict[Parser, Loaded] = field(default_factory=dict)
    #: Sources whose every column could not be parsed: the reason, for each check reading them.
    malformed: dict[Parser, str] = field(default_factory=dict)
    #: Which checks shared which engine pass (`dq run` tells).
    passes: list[EnginePass] = field(default_factory=list)
    #: When the engine's run ended (monotonic seconds): its errors are known from then on.
    ran_at: float | None = None


def _describe(exc: Exception) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


def prepare(
    checks: Sequence[type[QualityCheck]],
    *,
    spark: SparkSession | None = None,
    now: dt.datetime | None = None,
    data: Mapping[str, Data] | None = None,
    deadline_s: float = DEFAULT_DEADLINE_S,
    partitions: PartitionStore | None = None,
    full: bool = False,
    mutes: Sequence[object] = (),
    use_metadata: bool = True,
) -> Evaluation:
    """Each check's instance and sources; for an incremental check, the partitions to read (its
    source becomes those only). `data` maps check names to ready data, bypassing their parsers.
    `mutes`: the maintenance windows among them leave their points out of anomaly training."""
    started_at = now or utc_now()
    session = spark or SparkSession.getActiveSession() or spark_session()
    ship_checks(session, [check.__module__ for check in checks])  # Python predicates' modules
    given = dict(data or {})
    evaluation = Evaluation(
        [Pending(c, c(now=started_at), given=given.get(c.name), mutes=mutes) for c in checks],
        session,
        started_at,
        deadline_s,
        partitions,
        full,
        use_metadata,
    )
    for item in evaluation.items:
        if item.check.name in given:
            continue
        try:
            item.sources = item.instance.sources()
        except Exception as exc:
            item.error = f"building the sources failed: {_describe(exc)}"
            item.by_definition = True
        if item.error is None and item.check.incremental and (partitions or full):
            store = None if full else partitions
            prepared = prepare_partitions(
                item.check, item.instance, item.sources, session, store, deadline_s=deadline_s
            )
            if isinstance(prepared, str):
                item.error = prepared
            else:
                item.partitions = prepared
                item.sources = {"data": prepared.reader}
    return evaluation


def load(evaluation: Evaluation, *, parallelism: int = DEFAULT_PARALLELISM) -> None:
    """Each distinct parser loaded once, concurrently, each within its deadline; then each
    check's checker is built over its loaded data."""
    parsers = [
        parser
        for item in evaluation.items
        if item.given is None
        for parser in item.sources.values()
    ]
    evaluation.loaded = load_sources(
        parsers, evaluation.session, deadline_s=evaluation.deadline_s, parallelism=parallelism
    )
    for item in evaluation.items:
        if item.given is not None:
            _build_checker(item, item.given)
        elif item.error is None:
            _attach_sources(item, evaluation.loaded)


def _build_checker(item: Pending, data: Data) -> None:
    try:
        item.checker = item.instance.checker(data)
    except Exception as exc:  # a bug in the check's own code: report it, keep the others going
        item.error = f"building the checker failed: {_describe(exc)}"
        item.by_definition = True
    if item.error is None and not isinstance(item.checker, Checker):
        item.error = not_a_checker(item.checker)
        item.by_definition = True
    if isinstance(item.checker, Checker):
        item.checker.sample_size = item.check.sample_size  # sampled in the engine's pass
        attach_feedback(item.checker, item.check, item.mutes)
        if isinstance(item.checker, SchemaChecker):  # its previous run's schema: by check name
            item.checker.name_series(item.check.name)
        if item.partitions is not None:
            stable_checker(item.checker, item.check)


def _attach_sources(item: Pending, loaded: Mapping[Parser, Loaded]) -> None:
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


def run_engine(evaluation: Evaluation) -> None:
    """Every checker's result. Checkers over the same data (the same source read the same way)
    share one engine pass; text sources also get a scan of every column, in that pass when a
    checker reads the raw source. Incremental checks read their new and changed partitions.
    Their Spark jobs carry one tag (`checkers.cancellation`), by which they can be cancelled."""
    names = "+".join(i.check.name for i in evaluation.items)
    with tagged(evaluation.session, job_tag(f"checks-{names}")):
        _run_engine(evaluation)
    evaluation.ran_at = time.monotonic()


def _run_engine(evaluation: Evaluation) -> None:
    scans = {
        parser: FullScanChecker(source.frame, parser.describe(), parser.locate_malformed)
        for parser, source in evaluation.loaded.items()
        if source.frame is not None and parser.needs_full_scan
    }
    incremental = evaluation.partitions is not None and not evaluation.full
    ready = [i for i in evaluation.items if i.checker is not None]
    stored = [i for i in ready if i.partitions is not None and incremental]
    whole = [i for i in ready if not (i.partitions is not None and incremental)]
    work = [(i.checker, i.check.tolerance) for i in whole] + [(s, None) for s in scans.values()]
    results = run_checkers(work, use_metadata=evaluation.use_metadata)  # type: ignore[arg-type]
    for item, result in zip(whole, results[: len(whole)], strict=True):
        item.result = result
        item.timings["evaluate_s"] = result.pass_s
    evaluation.malformed = {
        parser: r.error for parser, r in zip(scans, results[len(whole) :], strict=True) if r.error
    }
    if stored:
        assert evaluation.partitions is not None
        started = time.perf_counter()
        for item, result in zip(
            stored, _run_incremental(stored, evaluation.loaded, evaluation.partitions), strict=True
        ):
            item.result = result
        elapsed = time.perf_counter() - started
        for item in stored:
            item.timings["evaluate_s"] = elapsed
    evaluation.passes = passes_of(
        [(i.check.name, tuple(p.describe() for p in i.sources.values()), i.result) for i in ready]
    )


def _run_incremental(
    items: Sequence[Pending], loaded: Mapping[Parser, Loaded], store: PartitionStore
) -> list[CheckerResult]:
    results: list[CheckerResult | None] = [None] * len(items)
    works, slots = [], []
    for n, item in enumerate(items):
        assert item.partitions is not None and item.checker is not None
        planned = plan_or_error(item.checker, item.check.tolerance)
        problem = incremental_problem(item.checker, item.partitions.columns)
        if isinstance(planned, CheckerResult):
            results[n] = planned
        elif problem or planned.frame is None or PARTITION_COLUMN not in planned.frame.columns:
            results[n] = CheckerResult.failed_to_run(
                f"{CONFIGURATION_ERROR}{problem or 'the checker dropped ' + PARTITION_COLUMN}"
            )
        else:
            base = item.partitions.base
            frame = loaded[item.partitions.reader].frame
            scan = (
                FullScanChecker(frame, base.describe(), base.locate_malformed)
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


def judge_all(evaluation: Evaluation) -> list[CheckOutcome]:
    """Each check's outcome, in order. A source found malformed is the cause for every check
    reading it: its reason names the file and the record."""
    outcomes = []
    for item in evaluation.items:
        item.timings.setdefault("evaluate_s", 0.0)
        result = item.result or CheckerResult.failed_to_run(item.error or "not run")
        broken = [
            evaluation.malformed[p] for p in item.sources.values() if p in evaluation.malformed
        ]
        if broken:
            result = CheckerResult.failed_to_run(broken[0])
        if item.partitions is not None and evaluation.full and result.rows is not None:
            scope = len(item.partitions.scope)
            result.reading = {
                "rows_read": result.rows,
                "partitions_read": scope,
                "partitions": scope,
            }
        outcomes.append(
            judge(
                item.check,
                item.checker,
                result,
                started_at=evaluation.started_at,
                timings=item.timings,
            )
        )
    return outcomes


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
    evaluation = prepare(
        checks,
        spark=spark,
        now=now,
        data=data,
        deadline_s=deadline_s,
        partitions=partitions,
        full=full,
    )
    load(evaluation, parallelism=parallelism)
    run_engine(evaluation)
    return judge_all(evaluation)


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
