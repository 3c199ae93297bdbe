"""The shared scan: every scan-shareable analyzer's aggregates in one `df.agg`, with isolation of
analyzers whose expressions fail so that one bad analyzer never hides the others."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from checkers.errors import describe_failure
from checkers.metrics._analyzer import ScanShareableAnalyzer, State
from checkers.metrics._capped import TooManySegmentsError, collect_capped


@dataclass
class ScanOutcome:
    """States of a scan (with `by`: per group in `grouped`, groups without rows absent)."""

    states: dict[ScanShareableAnalyzer, State] = field(default_factory=dict)
    errors: dict[ScanShareableAnalyzer, str] = field(default_factory=dict)
    actions: int = 0
    grouped: dict[object, dict[ScanShareableAnalyzer, State]] = field(default_factory=dict)

    def add(self, analyzers: Sequence[ScanShareableAnalyzer], found: _Found) -> None:
        for key, states in found.items():
            target = self.states if key is _WHOLE else self.grouped.setdefault(key, {})
            target.update(zip(analyzers, states, strict=True))


_WHOLE = object()  # the key of an ungrouped aggregation's only row
_Found = dict[object, list[State]]


def _aggregate(
    df: DataFrame,
    analyzers: Sequence[ScanShareableAnalyzer],
    by: str | None = None,
    cap: int | None = None,
) -> _Found:
    """Each analyzer's state (per value of the column `by`, when given, at most `cap` values)
    from one aggregation."""
    columns: list[Column] = []
    slices: list[tuple[int, int]] = []
    for analyzer in analyzers:
        aggs = analyzer.aggregations(df.schema)
        slices.append((len(columns), len(aggs)))
        columns.extend(aggs)
    if by is None:
        rows, offset = [(_WHOLE, df.agg(*columns).collect()[0])], 0
    else:
        grouped = df.groupBy(F.col(by)).agg(*columns)
        found = grouped.collect() if cap is None else collect_capped(grouped, [by], cap)
        rows, offset = [(r[0], r) for r in found], 1
    return {
        key: [
            analyzer.state_from_aggregates(row[offset + start : offset + start + size])
            for analyzer, (start, size) in zip(analyzers, slices, strict=True)
        ]
        for key, row in rows
    }


def analysis_error(df: DataFrame, analyzer: ScanShareableAnalyzer) -> str | None:
    """Resolve the analyzer's aggregates without running a job; the error text when they fail."""
    try:
        _ = df.agg(*analyzer.aggregations(df.schema)).schema
    except Exception as exc:  # a bad SQL predicate or filter: report it on this analyzer only
        return f"{analyzer!r}: {describe_failure(exc)}"
    return None


def run_scan(
    df: DataFrame,
    analyzers: Sequence[ScanShareableAnalyzer],
    *,
    by: str | None = None,
    cap: int | None = None,
) -> ScanOutcome:
    """One aggregation for all analyzers (grouped by the column `by`, when given, with at most
    `cap` groups: TooManySegmentsError beyond, raised). If it fails,
    drop the analyzers whose expressions do not resolve and retry once; if it still fails (a
    runtime error), run analyzers one by one."""
    outcome = ScanOutcome()
    if not analyzers:
        return outcome
    pending = list(analyzers)
    for attempt in range(2):
        try:
            found = _aggregate(df, pending, by, cap)
            outcome.actions += 1
            outcome.add(pending, found)
            return outcome
        except TooManySegmentsError:
            raise
        except Exception:
            outcome.actions += 1
            if attempt == 1:
                break
            invalid = {a: e for a in pending if (e := analysis_error(df, a)) is not None}
            outcome.errors.update(invalid)
            pending = [a for a in pending if a not in invalid]
            if not pending:
                return outcome
            if not invalid:
                break  # every expression resolves: a runtime failure, so isolate one by one
    for analyzer in pending:
        try:
            outcome.add([analyzer], _aggregate(df, [analyzer], by, cap))
        except Exception as exc:
            outcome.errors[analyzer] = f"{analyzer!r}: {describe_failure(exc)}"
        outcome.actions += 1
    return outcome
