"""Judging a MetricChecker's constraints per segment: one segmented engine run, then every
constraint on every segment's metrics; a failing element is a (segment, constraint) pair. With a
metric history, each segment has its own: its metrics are saved under its tag, and its anomaly
constraints judge against its own earlier runs."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from checkers.checker import CheckerResult
from checkers.metrics import Analyzer, Metric, Size, run_analysis
from checkers.metrics.constraints import ConstraintStatus
from checkers.metrics.verification import VerificationResult, evaluate_check, worst_status
from checkers.outcome import json_safe

if TYPE_CHECKING:
    from checkers.metric_checker import MetricChecker


def segment_label(columns: Sequence[str], segment: object) -> str:
    values = segment if isinstance(segment, tuple) else (segment,)
    return ", ".join(f"{c}={v}" for c, v in zip(columns, values, strict=True))


def judge_segments(checker: MetricChecker) -> CheckerResult:
    """The checker's result with each constraint judged for each segment of the data."""
    size = Size()
    analyzers = list(dict.fromkeys([size, *(c.analyzer for c in checker.constraints)]))
    result = run_analysis(
        checker.dataset,
        analyzers,
        segment_by=checker.segment_by,
        max_segments=checker.max_segments,
    )
    whole = result.metric(size)
    if not result.by_segment and not whole.ok:
        return CheckerResult.failed_to_run(whole.error or "no segments")
    failed, values = [], {}
    for segment, metrics in sorted(result.by_segment.items(), key=lambda kv: repr(kv[0])):
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
        total=len(checker.constraints) * len(result.by_segment),
        unexcused=len(failed),
        rows=int(whole.value) if whole.ok else None,  # type: ignore[arg-type]
        metrics=values,
        spark_actions=result.spark_actions,
        fetch_sample=lambda limit: failed[:limit],
    )
