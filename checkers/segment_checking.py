"""Judging a MetricChecker's constraints per segment: one segmented engine run, then every
constraint on every segment's metrics; a failing element is a (segment, constraint) pair. With a
metric history, each segment has its own: its metrics are saved under its tag, and its anomaly
constraints judge against its own earlier runs."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from checkers.checker import CheckerResult
from checkers.metrics import (
    Analyzer,
    FrequencyAnalyzer,
    Metric,
    ScanShareableAnalyzer,
    Size,
    merge_states,
    run_analysis,
)
from checkers.metrics.constraints import ConstraintStatus
from checkers.metrics.segment_frequencies import SegmentFrequency, segment_frequency_metrics
from checkers.metrics.segment_states import (
    PerSegment,
    TooManySegmentsError,
    merged_segment_metrics,
)
from checkers.metrics.segments import SegmentMetrics
from checkers.metrics.state_stores import LoadedState
from checkers.metrics.verification import VerificationResult, evaluate_check, worst_status
from checkers.outcome import json_safe

if TYPE_CHECKING:
    from checkers.metric_checker import MetricChecker


@dataclass
class SegmentedPlan:
    """How a checker judged per segment runs from states kept per partition and segment (an
    incremental check): its `PerSegment` analyzers, the most segments it judges, `finish`
    from each segment's metrics and the whole's row count (`Size()`), and its frequency tables
    with the segment columns in their key (`SegmentFrequency`)."""

    scanned: list[PerSegment]
    max_segments: int
    finish: Callable[[SegmentMetrics, Metric], CheckerResult]
    frequencies: list[SegmentFrequency] = field(default_factory=list)

    @property
    def analyzers(self) -> list[Analyzer]:
        """Every analyzer whose state a partition keeps for this plan."""
        return [*self.scanned, *self.frequencies]

    def judge_states(
        self, parts: Iterable[Mapping[Analyzer, LoadedState]], errors: Mapping[Analyzer, str]
    ) -> CheckerResult:
        """The result from each part's (partition's) states, merged per segment (no Spark job
        but one aggregation over the merged frequency tables, when there are any); an error
        computing the parts' states is the checker's."""
        if found := next((errors[a] for a in self.analyzers if a in errors), None):
            return CheckerResult.failed_to_run(found)
        merged = merge_states([Size(), *self.analyzers], parts)
        try:
            by_segment = merged_segment_metrics(
                self.scanned, merged, max_segments=self.max_segments
            )
            counted, actions = segment_frequency_metrics(
                self.frequencies, merged, max_segments=self.max_segments
            )
        except TooManySegmentsError as exc:
            return CheckerResult.failed_to_run(str(exc))
        for segment, metrics in counted.items():
            by_segment.setdefault(segment, {}).update(metrics)
        judged = self.finish(by_segment, Size().metric_from_state(merged[Size()]))
        judged.spark_actions += actions
        return judged


def segment_label(columns: Sequence[str], segment: object) -> str:
    values = segment if isinstance(segment, tuple) else (segment,)
    return ", ".join(f"{c}={v}" for c, v in zip(columns, values, strict=True))


def segment_analyzers(checker: MetricChecker) -> list[Analyzer]:
    """What each segment is judged on: its row count and every constraint's metric."""
    return list(dict.fromkeys([Size(), *(c.analyzer for c in checker.constraints)]))


def judge_segments(checker: MetricChecker) -> CheckerResult:
    """The checker's result with each constraint judged for each segment of the data."""
    result = run_analysis(
        checker.dataset,
        segment_analyzers(checker),
        segment_by=checker.segment_by,
        max_segments=checker.max_segments,
    )
    judged = judge_segment_metrics(checker, result.by_segment, result.metric(Size()))
    judged.spark_actions = result.spark_actions
    return judged


def stored_segments(checker: MetricChecker) -> SegmentedPlan:
    """The checker judged from states kept per partition and segment (an incremental check)."""
    by = checker.segment_by
    analyzers = segment_analyzers(checker)
    return SegmentedPlan(
        [PerSegment(a, by) for a in analyzers if isinstance(a, ScanShareableAnalyzer)],
        checker.max_segments,
        lambda segments, whole: judge_segment_metrics(checker, segments, whole),
        [SegmentFrequency(a, by) for a in analyzers if isinstance(a, FrequencyAnalyzer)],
    )


def judge_segment_metrics(
    checker: MetricChecker, by_segment: SegmentMetrics, whole: Metric
) -> CheckerResult:
    """Every constraint judged on each segment's metrics; `whole` is the data's row count."""
    if not by_segment and not whole.ok:
        return CheckerResult.failed_to_run(whole.error or "no segments")
    analyzers = segment_analyzers(checker)
    failed, values, agreements = [], {}, {}
    for segment, metrics in sorted(by_segment.items(), key=lambda kv: repr(kv[0])):
        label = segment_label(checker.segment_by, segment)
        judged: dict[Analyzer, Metric] = {
            a: metrics.get(a) or Metric(a, error=f"{a!r}: not computed per segment")
            for a in analyzers
        }
        history = checker.history.for_segment(label) if checker.history is not None else None
        results = [evaluate_check(check, judged, history) for check in checker.checks]
        if history is not None and history.save:
            history.record(VerificationResult(worst_status(results), results, judged))
        for result_of_check in results:
            for outcome in result_of_check.constraint_results:
                name = f"{outcome.constraint.name} [{label}]"
                values[name] = json_safe(outcome.value)
                if outcome.metric is not None and outcome.metric.agreement is not None:
                    agreements[name] = outcome.metric.agreement
                if outcome.status is ConstraintStatus.FAILURE:
                    failed.append(
                        {
                            "segment": label,
                            "constraint": outcome.constraint.name,
                            "metric": outcome.metric.name,
                            "value": json_safe(outcome.value),
                            "reason": outcome.message,
                        }
                    )
    return CheckerResult(
        failing=len(failed),
        total=len(checker.constraints) * len(by_segment),
        unexcused=len(failed),
        rows=int(whole.value) if whole.ok else None,  # type: ignore[arg-type]
        metrics=values,
        agreements=agreements,
        fetch_sample=lambda limit: failed[:limit],
    )
