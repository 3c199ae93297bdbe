"""Metrics answered from file statistics instead of a scan, only where provably exact: no `where`
filter, no row-level deletes, every file records the statistic, and (for bounds) the type's
statistics are exact and not truncated. Each answer is the analyzer's state, so it merges, is
stored and becomes a metric exactly as a scanned state would."""

from __future__ import annotations

import decimal
from collections.abc import Callable, Sequence

from pyspark.sql.types import DecimalType, IntegralType, StructType

from checkers.metrics._analyzer import Analyzer, State
from checkers.metrics.counts import Completeness, NumMatchesAndCountState, NumMatchesState, Size
from checkers.metrics.extremes import Maximum, MaxState, Minimum, MinState
from checkers.metrics.file_stats import FileStats, SourceStats

#: Spark types whose recorded bounds are exact: integers and decimals. Floating point is not
#: (Parquet and Iceberg leave NaN out of bounds, Spark's MAX counts NaN as the largest value).
EXACT_BOUND_TYPES = (IntegralType, DecimalType)

Answer = Callable[[Analyzer, SourceStats, StructType], State | None]


def _field(schema: StructType, name: str) -> str | None:
    """The top-level field `name` resolves to (Spark's case-insensitive resolution), or None for
    nested, quoted or missing names."""
    found = [f.name for f in schema.fields if f.name.lower() == name.lower()]
    return found[0] if len(found) == 1 else None


def _rows(files: Sequence[FileStats]) -> int | None:
    if any(f.rows is None for f in files):
        return None
    return sum(f.rows for f in files)  # type: ignore[misc]


def _size(analyzer: Analyzer, stats: SourceStats, schema: StructType) -> State | None:
    rows = _rows(stats.files)
    return None if rows is None else NumMatchesState(rows)


def _completeness(analyzer: Analyzer, stats: SourceStats, schema: StructType) -> State | None:
    assert isinstance(analyzer, Completeness)
    name, rows = _field(schema, analyzer.column), _rows(stats.files)
    if name is None or rows is None:
        return None
    nulls = [f.columns[name].nulls if name in f.columns else None for f in stats.files]
    if any(n is None for n in nulls):
        return None
    return NumMatchesAndCountState(rows - sum(nulls), rows)  # type: ignore[arg-type]


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float, decimal.Decimal)):
        return None
    return float(value)


def _bound(analyzer: Analyzer, stats: SourceStats, schema: StructType) -> State | None:
    assert isinstance(analyzer, Minimum)  # Maximum is a Minimum with is_min False
    name = _field(schema, analyzer.column)
    if name is None or name not in stats.exact_bounds:
        return None
    if not isinstance(schema[name].dataType, EXACT_BOUND_TYPES):
        return None
    values: list[float] = []
    for file in stats.files:
        column = file.columns.get(name)
        if column is None or file.rows is None or column.nulls is None:
            return None
        if column.nulls == file.rows:  # only NULLs: the file adds no bound
            continue
        value = _number(column.minimum if analyzer.is_min else column.maximum)
        if value is None:
            return None
        values.append(value)
    if not values:
        return MinState.zero() if analyzer.is_min else MaxState.zero()
    return MinState(min(values)) if analyzer.is_min else MaxState(max(values))


#: Which analyzers metadata can answer, and how. An analyzer not listed is scanned.
ANSWERS: dict[type[Analyzer], Answer] = {
    Size: _size,
    Completeness: _completeness,
    Minimum: _bound,
    Maximum: _bound,
}


def answer_from_metadata(
    analyzers: Sequence[Analyzer], stats: SourceStats, schema: StructType
) -> dict[Analyzer, State]:
    """The states of those `analyzers` the statistics answer exactly; the others are left out."""
    if stats.problem is not None:
        return {}
    answered: dict[Analyzer, State] = {}
    for analyzer in analyzers:
        answer = ANSWERS.get(type(analyzer))
        if answer is None or analyzer.where is not None:
            continue
        state = answer(analyzer, stats, schema)
        if state is not None:
            answered[analyzer] = state
    return answered
