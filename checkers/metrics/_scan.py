"""The shared scan: every scan-shareable analyzer's aggregates in one `df.agg`, with isolation of
analyzers whose expressions fail so that one bad analyzer never hides the others."""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from checkers.metrics._analyzer import ScanShareableAnalyzer, State
from checkers.redaction import redact_records
from checkers.shipping import explain_worker_error


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


def _short(line: str) -> str:
    """`org.apache.spark.SparkException: [X] msg` -> `SparkException: [X] msg`."""
    name, sep, message = line.strip().partition(": ")
    if sep and re.fullmatch(r"[\w.$]+", name):
        return f"{name.rsplit('.', 1)[-1]}{sep}{message}"
    return line.strip()


def _python_worker_error(text: list[str]) -> str | None:
    python_lines = []
    for line in text[1:]:
        if line.startswith(("\tat ", "JVM stacktrace")):
            break
        python_lines.append(line)
    raised = [line for line in python_lines if re.match(r"^[A-Za-z_.]*(Error|Exception)\b", line)]
    return explain_worker_error(f"{text[0]} {raised[-1]}") if raised else None


def describe_failure(exc: Exception) -> str:
    """What went wrong, without the JVM stack trace: Spark's message; for a failed job, the Spark
    cause and the root cause (a malformed record, a bad cast); for an error in a Python worker,
    the Python exception line. Works on classic Spark and Spark Connect messages alike."""
    text = redact_records(str(exc)).strip().splitlines()  # never a row of data in a message
    if not text:
        return type(exc).__name__
    if "Python worker" in text[0] and (python := _python_worker_error(text)):
        return python
    calling = text[0].startswith("An error occurred while calling") and len(text) > 1
    causes = [text[1].lstrip(": ") if calling else text[0]]
    for n, line in enumerate(text):
        if line.startswith("Caused by: "):
            more = itertools.takewhile(
                lambda x: not x.startswith(("\tat ", "Caused by", "\t...")), text[n + 1 : n + 6]
            )
            causes.append(" ".join([line.split("Caused by: ", 1)[1], *map(str.strip, more)]))
    if len(causes) == 1:
        return _short(causes[0])
    spark = [c for c in causes if "[" in c and "]" in c]  # Spark errors carry an error class
    chosen = list(dict.fromkeys([spark[-1] if spark else causes[0], causes[-1]]))
    return "; caused by ".join(_short(c) for c in chosen)


_WHOLE = object()  # the key of an ungrouped aggregation's only row
_Found = dict[object, list[State]]


def _aggregate(
    df: DataFrame, analyzers: Sequence[ScanShareableAnalyzer], by: str | None = None
) -> _Found:
    """Each analyzer's state (per value of the column `by`, when given) from one aggregation."""
    columns: list[Column] = []
    slices: list[tuple[int, int]] = []
    for analyzer in analyzers:
        aggs = analyzer.aggregations(df.schema)
        slices.append((len(columns), len(aggs)))
        columns.extend(aggs)
    if by is None:
        rows, offset = [(_WHOLE, df.agg(*columns).collect()[0])], 0
    else:
        rows, offset = [(r[0], r) for r in df.groupBy(F.col(by)).agg(*columns).collect()], 1
    return {
        key: [
            analyzer.state_from_aggregates(row[offset + start : offset + start + size])
            for analyzer, (start, size) in zip(analyzers, slices, strict=True)
        ]
        for key, row in rows
    }


def _analysis_error(df: DataFrame, analyzer: ScanShareableAnalyzer) -> str | None:
    """Resolve the analyzer's aggregates without running a job; the error text when they fail."""
    try:
        _ = df.agg(*analyzer.aggregations(df.schema)).schema
    except Exception as exc:  # a bad SQL predicate or filter: report it on this analyzer only
        return f"{analyzer!r}: {describe_failure(exc)}"
    return None


def run_scan(
    df: DataFrame, analyzers: Sequence[ScanShareableAnalyzer], *, by: str | None = None
) -> ScanOutcome:
    """One aggregation for all analyzers (grouped by the column `by`, when given). If it fails,
    drop the analyzers whose expressions do not resolve and retry once; if it still fails (a
    runtime error), run analyzers one by one."""
    outcome = ScanOutcome()
    if not analyzers:
        return outcome
    pending = list(analyzers)
    for attempt in range(2):
        try:
            found = _aggregate(df, pending, by)
            outcome.actions += 1
            outcome.add(pending, found)
            return outcome
        except Exception:
            outcome.actions += 1
            if attempt == 1:
                break
            invalid = {a: e for a in pending if (e := _analysis_error(df, a)) is not None}
            outcome.errors.update(invalid)
            pending = [a for a in pending if a not in invalid]
            if not pending:
                return outcome
            if not invalid:
                break  # every expression resolves: a runtime failure, so isolate one by one
    for analyzer in pending:
        try:
            outcome.add([analyzer], _aggregate(df, [analyzer], by))
        except Exception as exc:
            outcome.errors[analyzer] = f"{analyzer!r}: {describe_failure(exc)}"
        outcome.actions += 1
    return outcome
