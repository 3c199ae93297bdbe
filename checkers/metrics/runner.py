"""The analysis runner (Algorithm 1 of the differential Deequ paper): all scan-shareable analyzers
in one aggregation, all grouping analyzers from one grouping query, previously stored states merged
in before metrics are computed, and a count of the Spark actions it took."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum

from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import StructType

from checkers.errors import describe_failure
from checkers.metrics import _grouping
from checkers.metrics._analyzer import (
    Analyzer,
    FrequencyAnalyzer,
    OwnPassAnalyzer,
    ScanShareableAnalyzer,
    State,
)
from checkers.metrics._metric import Metric, MetricSource
from checkers.metrics._scan import analysis_error, run_scan
from checkers.metrics.file_stats import SourceStats, stats_of
from checkers.metrics.frequencies import FrequencyState, read_parquet
from checkers.metrics.metadata_answers import answer_from_metadata
from checkers.metrics.segments import MAX_SEGMENTS, Segment, SegmentMetrics, segment_metrics
from checkers.metrics.standalone import SchemaAnalyzer, run_standalone
from checkers.metrics.state_stores import FrequencyTableStore, StateStore

COLUMNAR_SUFFIXES = (".parquet", ".orc")


class SketchPlan(StrEnum):
    """Where sketch aggregates run: in the shared scan, or in a pass of their own."""

    AUTO = "auto"  # own pass on columnar files (measured faster there), shared scan otherwise
    SHARED = "shared"
    SEPARATE = "separate"


@dataclass
class AnalysisResult:
    """Metrics of one engine run, keyed by analyzer, with the states they came from."""

    metrics: dict[Analyzer, Metric]
    states: dict[Analyzer, State] = field(default_factory=dict)
    spark_actions: int = 0
    #: With `segment_by`: each segment's metrics, keyed by the segment's value.
    by_segment: SegmentMetrics = field(default_factory=dict)

    def segments(self, analyzer: Analyzer) -> dict[Segment, Metric]:
        """`{segment value: Metric}` of a run with `segment_by` (a tuple of values for several
        segment columns); a segment without rows is absent."""
        return {s: found[analyzer] for s, found in self.by_segment.items() if analyzer in found}

    #: Bytes of data files no Spark job read because metadata answered every metric (0 when a
    #: scan ran, or the source has no file statistics).
    bytes_not_read: int = 0

    def metric(self, analyzer: Analyzer) -> Metric:
        try:
            return self.metrics[analyzer]
        except KeyError:
            raise KeyError(f"{analyzer!r} was not part of this analysis") from None

    def value(self, analyzer: Analyzer) -> object:
        """The metric's value; raises ValueError with the metric's error when it failed."""
        metric = self.metric(analyzer)
        if not metric.ok:
            raise ValueError(metric.error)
        return metric.value

    def __iter__(self):
        return iter(self.metrics.values())


def _unique(analyzers: Iterable[Analyzer]) -> list[Analyzer]:
    return list(dict.fromkeys(analyzers))


def split_by_schema(
    analyzers: Sequence[Analyzer], schema: StructType
) -> tuple[list[Analyzer], dict[Analyzer, str]]:
    """The analyzers that can run on `schema`, and why each other one cannot (no Spark job)."""
    runnable, problems = [], {}
    for analyzer in analyzers:
        problem = analyzer.schema_error(schema)
        if problem is None:
            runnable.append(analyzer)
        else:
            problems[analyzer] = problem
    return runnable, problems


def unresolved(df: DataFrame, analyzers: Sequence[Analyzer]) -> dict[Analyzer, str]:
    """The analyzers that cannot run on `df` whatever its rows hold (a column it lacks, an
    expression that does not resolve), with why: Spark analyses their aggregates, no job runs."""
    runnable, problems = split_by_schema(analyzers, df.schema)
    for analyzer in (a for a in runnable if isinstance(a, ScanShareableAnalyzer)):
        if (error := analysis_error(df, analyzer)) is not None:
            problems[analyzer] = error
    return problems


def _reads_columnar_files(df: DataFrame) -> bool:
    try:
        files = df.inputFiles()
    except Exception:  # sources without files (JDBC, in-memory) are row-wise anyway
        return False
    return bool(files) and all(f.lower().endswith(COLUMNAR_SUFFIXES) for f in files)


def _scan_passes_split(plan: SketchPlan, columnar: bool) -> bool:
    """Whether sketches get a pass of their own."""
    return plan is SketchPlan.SEPARATE or (plan is SketchPlan.AUTO and columnar)


def _scan_passes(
    analyzers: list[ScanShareableAnalyzer], plan: SketchPlan, columnar: bool
) -> list[list[ScanShareableAnalyzer]]:
    sketches = [a for a in analyzers if a.is_sketch]
    declarative = [a for a in analyzers if not a.is_sketch]
    separate = _scan_passes_split(plan, columnar)
    passes = [declarative, sketches] if separate else [declarative + sketches]
    return [p for p in passes if p]


def run_analysis(
    df: DataFrame,
    analyzers: Sequence[Analyzer],
    *,
    state_store: StateStore | None = None,
    dataset: str | None = None,
    partition: str | None = None,
    aggregate_with: Mapping[Analyzer, State] | None = None,
    sketch_plan: SketchPlan = SketchPlan.AUTO,
    segment_by: Sequence[str] = (),
    max_segments: int = MAX_SEGMENTS,
    use_metadata: bool = True,
) -> AnalysisResult:
    """Compute every analyzer's metric over `df` in as few Spark passes as possible.

    With `segment_by`, scan-shareable and frequency analyzers are also computed for each value
    of those columns, in the same passes (`result.segments(analyzer)`); more than
    `max_segments` segments make every metric an error (segments.py).

    With `state_store`, `dataset` and `partition`, the states of `df` are stored as that
    partition's (replacing earlier ones); metrics are those of `df` merged with `aggregate_with`.

    Plans are chosen by measurement (benchmarks/README.md): on columnar files (Parquet, ORC)
    sketches get a pass of their own, on row formats they join the shared scan; all frequency
    tables come from one query. `sketch_plan` overrides the choice.

    With `use_metadata` (the default), metrics the source's file statistics answer exactly
    (`checkers.metrics.metadata_answers`) come from them; the rest scan only what they need.
    """
    if state_store is not None and (dataset is None or partition is None):
        raise ValueError("storing states needs both dataset= and partition=")
    unique = _unique(analyzers)
    runnable, problems = split_by_schema(unique, df.schema)
    metrics: dict[Analyzer, Metric] = {a: Metric(a, error=e) for a, e in problems.items()}
    if segment_by:
        if state_store is not None or aggregate_with:
            raise ValueError("segment_by does not store or merge states (yet): drop one")
        separate = _scan_passes_split(sketch_plan, _reads_columnar_files(df))
        by_segment, whole, used = segment_metrics(
            df, runnable, segment_by, max_segments=max_segments, separate_sketches=separate
        )
        metrics.update(whole)
        return AnalysisResult({a: metrics[a] for a in unique}, {}, used, by_segment=by_segment)
    states: dict[Analyzer, State] = {}
    actions = 0
    previous = dict(aggregate_with or {})

    stats = stats_of(df) if use_metadata else None
    if stats is not None:
        known = answer_from_metadata(runnable, stats, df.schema)
        for analyzer, state in known.items():
            states[analyzer] = state
            merged = state.merge(previous[analyzer]) if analyzer in previous else state
            metric = analyzer.metric_from_state(merged)
            metrics[analyzer] = replace(metric, source=MetricSource.METADATA)
        runnable = [a for a in runnable if a not in known]
    # ColumnCount from the schema (no job), CustomSql with a query each
    own_metrics, own_states, own_actions = run_standalone(df, runnable, previous)
    metrics.update(
        {
            a: replace(m, source=MetricSource.METADATA) if isinstance(a, SchemaAnalyzer) else m
            for a, m in own_metrics.items()
        }
    )
    states.update(own_states)
    actions += own_actions

    columnar = _reads_columnar_files(df)
    scan = [a for a in runnable if isinstance(a, ScanShareableAnalyzer)]
    for group in _scan_passes(scan, sketch_plan, columnar):
        outcome = run_scan(df, group)
        actions += outcome.actions
        for analyzer, error in outcome.errors.items():
            metrics[analyzer] = Metric(analyzer, error=error)
        for analyzer, state in outcome.states.items():
            states[analyzer] = state
            merged = state.merge(previous[analyzer]) if analyzer in previous else state
            metrics[analyzer] = analyzer.metric_from_state(merged)

    frequency = [a for a in runnable if isinstance(a, FrequencyAnalyzer)]
    if frequency:
        location = None
        if isinstance(state_store, FrequencyTableStore):
            assert dataset is not None and partition is not None
            location = state_store.frequency_location(dataset, partition)
        found, found_states, found_actions = _run_grouping(
            df, frequency, previous, location, columnar
        )
        metrics.update(found)
        states.update(found_states)
        actions += found_actions

    for own in (a for a in runnable if isinstance(a, OwnPassAnalyzer)):
        metrics[own], own_state, used = _run_own_pass(df, own, previous.get(own))
        actions += used
        if own_state is not None:
            states[own] = own_state

    if state_store is not None and states:
        assert dataset is not None and partition is not None
        state_store.save(dataset, partition, states)
    unread = _bytes_not_read(stats, metrics, actions)
    return AnalysisResult({a: metrics[a] for a in unique}, states, actions, bytes_not_read=unread)


def _bytes_not_read(
    stats: SourceStats | None, metrics: Mapping[Analyzer, Metric], jobs: int
) -> int:
    """The data files' bytes when metadata answered and no Spark action read the data."""
    answered = any(m.source is MetricSource.METADATA for m in metrics.values())
    return stats.bytes if stats is not None and answered and jobs == 0 else 0


def _run_own_pass(
    df: DataFrame, analyzer: OwnPassAnalyzer, earlier: State | None
) -> tuple[Metric, State | None, int]:
    """The analyzer's metric (of its state merged with `earlier`), its state, and Spark actions;
    a failure becomes an error metric (counted as one action)."""
    try:
        state, actions = analyzer.compute_state(df, earlier)
    except Exception as exc:
        return Metric(analyzer, error=f"{analyzer!r}: {describe_failure(exc)}"), None, 1
    merged = state.merge(earlier) if earlier is not None else state
    return analyzer.metric_from_state(merged), state, actions


def _run_grouping(
    df: DataFrame,
    analyzers: list[FrequencyAnalyzer],
    previous: Mapping[Analyzer, State],
    location: str | None,
    columnar: bool,
) -> tuple[dict[Analyzer, Metric], dict[Analyzer, State], int]:
    stack_size = _grouping.COLUMNAR_STACK if columnar else None
    try:
        return _grouping_pass(df, analyzers, previous, location, stack_size)
    except Exception as exc:
        failure = describe_failure(exc)
    # Report the filters that do not resolve (analysis only, no job); retry the others once.
    wheres = {a.where for a in analyzers if a.where is not None}
    errors = {w: e for w in wheres if (e := _filter_error(df, w)) is not None}
    metrics: dict[Analyzer, Metric] = {
        a: Metric(a, error=f"{a!r}: {errors[a.where]}") for a in analyzers if a.where in errors
    }
    rest = [a for a in analyzers if a.where not in errors]
    actions = 1
    if errors and rest:
        try:
            found, states, more = _grouping_pass(df, rest, previous, location, stack_size)
            return {**metrics, **found}, states, actions + more
        except Exception as exc:
            failure = describe_failure(exc)
            actions += 1
    metrics.update({a: Metric(a, error=f"{a!r}: {failure}") for a in rest})
    return metrics, {}, actions


def _filter_error(df: DataFrame, where: str) -> str | None:
    # A projection, not df.where(...): Spark Connect answers a filter's schema from its child's
    # cached schema without analysing the condition.
    try:
        _ = df.select(F.expr(where)).schema
    except Exception as exc:
        return describe_failure(exc)
    return None


def frequency_tables(
    df: DataFrame,
    sets: Sequence[_grouping.GroupingSet],
    layout: _grouping.Layout,
    location: str | None,
    stack_size: int | None,
) -> tuple[DataFrame, dict[_grouping.GroupingSet, FrequencyState], int]:
    """The unified frequency table of `sets` (written to `location` as Parquet when given, one
    Spark job) and each set's state."""
    table = _grouping.frequency_table(df, sets, layout, stack_size=stack_size)
    actions = 0
    if location is not None:
        schema = table.schema.json()
        table.write.mode("overwrite").partitionBy(_grouping.SET_ID).parquet(location)
        actions += 1
        table = read_parquet(location, schema)
    return table, _grouping.set_states(table, location, sets, layout), actions


def _grouping_pass(
    df: DataFrame,
    analyzers: list[FrequencyAnalyzer],
    previous: Mapping[Analyzer, State],
    location: str | None,
    stack_size: int | None,
) -> tuple[dict[Analyzer, Metric], dict[Analyzer, State], int]:
    sets = _grouping.plan_sets(analyzers)
    layout = _grouping.run_layout(df.schema, sets)
    table, per_set, actions = frequency_tables(df, sets, layout, location, stack_size)
    earlier = {
        s: state
        for s in sets
        if isinstance(
            state := next((previous[a] for a in s.analyzers if a in previous), None),
            FrequencyState,
        )
    }
    if earlier:
        table = _grouping.merge_tables(table, _grouping.table_from_states(earlier, layout), layout)
    metrics, metric_actions = _grouping.frequency_metrics(table, sets, layout)
    states: dict[Analyzer, State] = {a: per_set[s] for s in sets for a in s.analyzers}
    return dict(metrics), states, actions + metric_actions
