"""What every checker shares: a plan (a DataFrame, the engine analyzers it needs, how metrics
become a result), the `CheckerResult`, and `run_checkers`, which runs the plans of many checkers
over the same DataFrame in one engine run."""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from checkers._keys import key_columns, quoted
from checkers.errors import describe_failure
from checkers.metrics import Analyzer, CountWhere, Metric, run_analysis
from checkers.metrics.agreement import Agreement
from checkers.outcome import SampleRow, json_safe
from checkers.sample_limits import IN_FILE, bounded_rows
from checkers.tolerances import KnownBroken, Tolerance

if TYPE_CHECKING:
    from checkers.segment_checking import SegmentedPlan

DEFAULT_SAMPLE_SIZE = 20
DEFAULT_KEY_LIMIT = 100


@dataclass
class CheckerResult:
    """Counts of one checker's run. `failing` elements break the rule; `unexcused` of them are not
    covered by KnownBroken keys; `rows` is how many input rows were read (None when unknown).
    `error` says why the checker could not be evaluated. The failing sample is fetched on demand,
    and only once."""

    failing: int = 0
    total: int = 0
    unexcused: int = 0
    rows: int | None = None
    metrics: dict[str, object] = field(default_factory=dict)
    #: How a recomputation may answer each metric a sketch answered (CheckOutcome.agreements).
    agreements: dict[str, Agreement] = field(default_factory=dict)
    error: str | None = None
    spark_actions: int = 0
    #: What the run read: `rows_read`, and for incremental checks `partitions_read` (new or
    #: changed) of `partitions` (in scope).
    reading: dict[str, int] = field(default_factory=dict)
    #: Where each metric the result names came from (`scan`, `metadata`, `states`), by name.
    metric_sources: dict[str, str] = field(default_factory=dict)
    #: How many distinct keys `failing_keys` are drawn from, and whether the count is exact (a
    #: sketch estimates it beyond a few thousand); None when the checker has no key.
    keys_distinct: tuple[int, bool] | None = None
    #: The engine pass this result came from (results of one `run_checkers` call with the same
    #: number shared it) and how long that pass took; None when no pass ran for it.
    engine_pass: int | None = None
    pass_s: float = 0.0
    fetch_sample: Callable[[int], list[SampleRow]] | None = field(default=None, repr=False)
    fetch_keys: Callable[[int], list[object]] | None = field(default=None, repr=False)
    _sample: list[SampleRow] | None = field(default=None, repr=False)
    _keys: list[object] | None = field(default=None, repr=False)

    @classmethod
    def failed_to_run(cls, error: str) -> CheckerResult:
        return cls(error=error)

    def sample(self, limit: int = DEFAULT_SAMPLE_SIZE) -> list[SampleRow]:
        """Up to `limit` failing elements (unexcused ones first); no Spark work when none failed."""
        if self._sample is None:
            if self.failing == 0 or self.fetch_sample is None:
                self._sample = []
            else:
                try:
                    self._sample = self.fetch_sample(limit)
                except Exception as exc:  # the counts stand; say why the sample is missing
                    self._sample = [{"sample_error": describe_failure(exc)}]
        return self._sample[:limit]

    def failing_keys(self, limit: int = DEFAULT_KEY_LIMIT) -> list[object]:
        """Up to `limit` distinct keys of unexcused failing elements (of all failing ones when
        every failure is excused), sorted; empty when the checker has no key."""
        if self._keys is None:
            if self.failing == 0 or self.fetch_keys is None:
                self._keys = []
            else:
                try:
                    self._keys = self.fetch_keys(limit)
                except Exception:  # keys are a convenience; the counts and sample stand
                    self._keys = []
        return self._keys[:limit]


@dataclass
class CheckerPlan:
    """How a checker runs on the engine: its `analyzers` over `frame`, then `finish`. A plan
    without a frame reads no data (a monitor of tables' metadata): it is finished at once."""

    frame: DataFrame | None
    analyzers: list[Analyzer]
    finish: Callable[[Mapping[Analyzer, Metric]], CheckerResult]
    #: A checker judged per segment: what an incremental run keeps per partition and segment.
    segmented: SegmentedPlan | None = None


class Checker(ABC):
    """Base of checkers. A checker describes *what* to compute; the engine decides how."""

    #: Columns that identify an element (for KnownBroken keys and for reading samples).
    key: tuple[str, ...] = ()
    #: Failing elements sampled in the engine's pass (a larger `sample()` costs a query).
    sample_size: int = DEFAULT_SAMPLE_SIZE

    @abstractmethod
    def plan(self, excused: Sequence[KnownBroken] = ()) -> CheckerPlan:
        """The engine work for this checker; `excused` keys do not count as unexcused."""

    def incremental_problem(self, partition_columns: Sequence[str]) -> str | None:
        """Why this checker cannot be evaluated partition by partition (its states would not add
        up over partitions), or None when it can."""
        return (
            f"{type(self).__name__} cannot be evaluated incrementally: its result over two "
            "partitions is not the merge of its results over each"
        )

    def run(
        self, tolerance: Tolerance | None = None, *, use_metadata: bool = True
    ) -> CheckerResult:
        """Run this checker alone (use `run_checkers` to share passes between checkers)."""
        return run_checkers([(self, tolerance)], use_metadata=use_metadata)[0]


def rows_to_dicts(rows: Iterable[object]) -> list[SampleRow]:
    # bounded as the failing-rows file keeps them: a 2 MB value is never held whole
    found = [json_safe(row.asDict(recursive=True)) for row in rows]  # type: ignore[attr-defined]
    return bounded_rows(found, IN_FILE)  # type: ignore[arg-type]


def excused_condition(
    excused: Sequence[KnownBroken], default_key: Sequence[str], frame: DataFrame | None = None
) -> Column | None:
    """TRUE where a row's key is listed by one of the KnownBroken tolerances. With `frame`, key
    columns are resolved against its schema (`KeyColumnError` when one is missing)."""
    conditions = []
    for known in excused:
        names = known.columns or tuple(default_key)
        if not names:
            raise ValueError(
                "KnownBroken needs key columns: pass columns= to KnownBroken or key= to the checker"
            )
        columns = (
            key_columns(frame, names, role="KnownBroken key column")
            if frame is not None
            else [F.col(n) for n in names]
        )
        if known.nulls:  # explicit: NULL never equals a listed key
            conditions.append(_any_null(columns))
        if len(columns) == 1:
            values = [k[0] if isinstance(k, tuple) else k for k in known.keys]
            if values:
                conditions.append(columns[0].isin(values))
            continue
        for key in known.keys:
            if not isinstance(key, tuple) or len(key) != len(columns):
                raise ValueError(
                    f"KnownBroken key {key!r} needs one value per key column {tuple(names)}: "
                    f"write it as a tuple"
                )
            parts = [c == F.lit(v) for c, v in zip(columns, key, strict=True)]
            match = parts[0]
            for part in parts[1:]:
                match = match & part
            conditions.append(match)
    if not conditions:
        return None
    combined = conditions[0]
    for condition in conditions[1:]:
        combined = combined | condition
    return F.coalesce(combined, F.lit(False))


def _any_null(columns: Sequence[Column]) -> Column:
    condition = columns[0].isNull()
    for column in columns[1:]:
        condition = condition | column.isNull()
    return condition


CONFIGURATION_ERROR = "configuration error: "


def not_a_checker(value: object) -> str:
    """Why a `checker()` that returned `value` (not a Checker) could not run."""
    forgot = " (a `return` missing at the end of checker()?)" if value is None else ""
    return (
        f"{CONFIGURATION_ERROR}checker() returned {type(value).__name__} {value!r:.80}"
        f"{forgot}, not a Checker: return one, e.g. "
        "PredicateSingleDatasetChecker(data, 'amount >= 0')"
    )


def plan_or_error(checker: Checker, tolerance: Tolerance | None) -> CheckerPlan | CheckerResult:
    """The checker's plan, or the result saying why it has none: a mistake in the check's
    configuration (KnownBroken without key columns, a key column not in the data...) is that
    check's ERROR, never the run's."""
    if not isinstance(checker, Checker):
        return CheckerResult.failed_to_run(not_a_checker(checker))
    try:
        return checker.plan(tolerance.known_broken() if tolerance else ())
    except ValueError as exc:
        if type(exc).__module__.startswith("pyspark"):
            return CheckerResult.failed_to_run(describe_failure(exc))
        return CheckerResult.failed_to_run(f"{CONFIGURATION_ERROR}{exc}")
    except Exception as exc:  # a DataFrame that cannot even be planned on
        return CheckerResult.failed_to_run(describe_failure(exc))


def semantic_key(frame: DataFrame) -> int | None:
    """Spark's hash of the frame's plan with names normalised (one analysis; None when the plan
    cannot be analyzed: such a frame shares nothing, and its own run reports why)."""
    try:
        return frame.semanticHash()
    except Exception:
        return None


def same_data(a: DataFrame, b: DataFrame) -> bool:
    """Whether two DataFrames are the same data read the same way: the same object, or plans Spark
    finds semantically equal (the same source with the same transformation, e.g. two checks
    applying one filter). Spark's own answer, on classic Spark and Spark Connect alike."""
    if a is b:
        return True
    try:
        return a.sameSemantics(b)
    except Exception:  # a plan Spark cannot analyze shares nothing; its own run reports why
        return False


def pass_groups(frames: Sequence[DataFrame | None]) -> list[list[int]]:
    """Indexes of `frames` that share one engine pass, in order of first appearance: the pass key
    is the data itself (`same_data`), not the DataFrame object a checker happens to hold. Each
    distinct frame is hashed once (an analysis request on Spark Connect); plans are compared only
    when their hashes agree."""
    groups: list[tuple[DataFrame, int | None, list[int]]] = []
    for index, frame in enumerate(frames):
        if frame is None:
            continue
        found = next((g for g in groups if g[0] is frame), None)
        if found is None:
            key = semantic_key(frame)
            found = next(
                (g for g in groups if key is not None and g[1] == key and same_data(g[0], frame)),
                None,
            )
            if found is None:
                groups.append((frame, key, [index]))
                continue
        found[2].append(index)
    return [members for _, _, members in groups]


def _finish_without_data(plan: CheckerPlan) -> CheckerResult:
    try:
        return plan.finish({})
    except Exception as exc:  # the checker's own metadata reading failed: its ERROR
        return CheckerResult.failed_to_run(describe_failure(exc))


def run_checkers(
    checkers: Sequence[tuple[Checker, Tolerance | None]] | Sequence[Checker],
    *,
    use_metadata: bool = True,
) -> list[CheckerResult]:
    """Run many checkers; those planned over the same data share one engine run, so k row
    predicates over one dataset cost one aggregation pass. Each result names its pass
    (`engine_pass`) and that pass's time (`pass_s`). `use_metadata=False` scans every metric
    (no answers from file statistics: `dq run --no-metadata`)."""
    pairs = [c if isinstance(c, tuple) else (c, None) for c in checkers]
    planned = [plan_or_error(checker, tolerance) for checker, tolerance in pairs]
    results: list[CheckerResult | None] = [
        _finish_without_data(p) if isinstance(p, CheckerPlan) and p.frame is None else None
        for p in planned
    ]
    for i, given in enumerate(planned):
        if isinstance(given, CheckerResult):
            results[i] = given
    plans = [p if isinstance(p, CheckerPlan) and p.frame is not None else None for p in planned]
    groups = pass_groups([p.frame if p is not None else None for p in plans])
    for number, indexes in enumerate(groups):
        members = [p for i in indexes if (p := plans[i]) is not None]
        analyzers = [a for p in members for a in p.analyzers]
        started = time.perf_counter()
        try:
            frame = members[0].frame
            assert frame is not None  # frame-less plans finished above
            analysis = run_analysis(frame, analyzers, use_metadata=use_metadata)
        except Exception as exc:
            for i in indexes:
                results[i] = CheckerResult.failed_to_run(describe_failure(exc))
            continue
        for n, (i, plan) in enumerate(zip(indexes, members, strict=True)):
            result = plan.finish(analysis.metrics)
            result.spark_actions = analysis.spark_actions if n == 0 else 0
            if analysis.bytes_not_read:  # metadata answered: the files were not read
                result.reading = {**result.reading, "bytes_not_read": analysis.bytes_not_read}
            result.engine_pass = number
            results[i] = result
        spent = time.perf_counter() - started
        for i in indexes:
            if (done := results[i]) is not None:
                done.pass_s = spent
    return [r for r in results if r is not None]


def first_error(metrics: Mapping[Analyzer, Metric], analyzers: Iterable[Analyzer]) -> str | None:
    for analyzer in analyzers:
        metric = metrics[analyzer]
        if not metric.ok:
            return metric.error
    return None


class FullScanChecker(Checker):
    """Reads every column of `frame` once (in the shared pass when other checkers use the same
    DataFrame). Text sources are parsed lazily, column by column: without this, a malformed value
    in a column no check uses would never be seen. Its result has an error when parsing fails."""

    def __init__(
        self,
        frame: DataFrame,
        source: str,
        locate: Callable[[DataFrame], object | None] | None = None,
    ) -> None:
        self.frame = frame
        self.source = source
        #: Where the first malformed record is (its file and line), asked only after a failure.
        self.locate = locate

    def malformed(self, error: str) -> CheckerResult:
        """The ERROR of a failed scan: Spark's reason and, when it can be found, the file and
        line of the first malformed record (Spark's message has no line, and the record itself
        is withheld)."""
        reason = error.partition("): ")[2] or error
        try:
            where = self.locate(self.frame) if self.locate is not None else None
        except Exception:  # the reason stands without a line
            where = None
        at = f" at {where}" if where is not None else ""
        return CheckerResult.failed_to_run(f"{self.source} is malformed{at}: {reason}")

    def plan(self, excused: Sequence[KnownBroken] = ()) -> CheckerPlan:
        columns = [F.col(quoted(c)) for c in self.frame.columns]
        # A condition on a hash of every column: the optimizer cannot drop it, so all are parsed.
        scan = CountWhere(f"full scan of {self.source}", F.xxhash64(*columns) != F.lit(0))

        def finish(metrics: Mapping[Analyzer, Metric]) -> CheckerResult:
            metric = metrics[scan]
            if not metric.ok:
                return self.malformed(metric.error or "")
            return CheckerResult()

        return CheckerPlan(self.frame, [scan], finish)
