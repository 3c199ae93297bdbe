"""Every analyzer, side by side: a missing column and a wrong type are error metrics while the
rest of the run is still computed in the same passes; empty input and a filter that keeps nothing
give the documented result."""

from __future__ import annotations

import pytest

from checkers.metrics import (
    ApproxCountDistinct,
    ApproxQuantile,
    ApproxQuantiles,
    Completeness,
    Correlation,
    CountDistinct,
    DataType,
    Distinctness,
    DuplicateRowCount,
    Entropy,
    ExactQuantile,
    Histogram,
    InterquartileRange,
    Kurtosis,
    Maximum,
    MaxLength,
    Mean,
    Minimum,
    MinLength,
    MutualInformation,
    PatternMatch,
    RatioOfSums,
    Size,
    Skewness,
    StandardDeviation,
    Sum,
    Uniqueness,
    UniqueValueRatio,
    Variance,
    ZerosCount,
    run_analysis,
)

# Every analyzer's aggregates and states cross the Connect client; bad ones are isolated by plan
# analysis. (tests/connect_paths.py)
pytestmark = pytest.mark.connect

SCHEMA = "n double, s string, m map<string,int>"
ROWS = [(1.0, "a", {"k": 1}), (2.0, None, None), (None, "b", {"k": 2})]

# analyzer factory: (column) -> analyzer, with a column of the wrong type, or None if any type fits
FACTORIES = {
    "Completeness": (lambda c, w=None: Completeness(c, where=w), None),
    "PatternMatch": (lambda c, w=None: PatternMatch(c, "a", where=w), "n"),
    "Sum": (lambda c, w=None: Sum(c, where=w), "s"),
    "Mean": (lambda c, w=None: Mean(c, where=w), "s"),
    "Minimum": (lambda c, w=None: Minimum(c, where=w), "s"),
    "Maximum": (lambda c, w=None: Maximum(c, where=w), "s"),
    "MinLength": (lambda c, w=None: MinLength(c, where=w), "n"),
    "MaxLength": (lambda c, w=None: MaxLength(c, where=w), "n"),
    "StandardDeviation": (lambda c, w=None: StandardDeviation(c, where=w), "s"),
    "SampleStandardDeviation": (lambda c, w=None: StandardDeviation(c, where=w, sample=True), "s"),
    "Variance": (lambda c, w=None: Variance(c, where=w), "s"),
    "SampleVariance": (lambda c, w=None: Variance(c, where=w, sample=True), "s"),
    "Skewness": (lambda c, w=None: Skewness(c, where=w), "s"),
    "Kurtosis": (lambda c, w=None: Kurtosis(c, where=w), "s"),
    "Correlation": (lambda c, w=None: Correlation(c, "n", where=w), "s"),
    "DataType": (lambda c, w=None: DataType(c, where=w), None),
    "ApproxCountDistinct": (lambda c, w=None: ApproxCountDistinct(c, where=w), "m"),
    "ApproxQuantile": (lambda c, w=None: ApproxQuantile(c, 0.5, where=w), "s"),
    "ApproxQuantiles": (lambda c, w=None: ApproxQuantiles(c, (0.5,), where=w), "s"),
    "CountDistinct": (lambda c, w=None: CountDistinct(c, where=w), "m"),
    "Distinctness": (lambda c, w=None: Distinctness(c, where=w), "m"),
    "Uniqueness": (lambda c, w=None: Uniqueness(c, where=w), "m"),
    "UniqueValueRatio": (lambda c, w=None: UniqueValueRatio(c, where=w), "m"),
    "Entropy": (lambda c, w=None: Entropy(c, where=w), "m"),
    "MutualInformation": (lambda c, w=None: MutualInformation([c, "s"], where=w), "m"),
    "Histogram": (lambda c, w=None: Histogram(c, where=w), "m"),
    "ZerosCount": (lambda c, w=None: ZerosCount(c, where=w), "s"),
    "RatioOfSums": (lambda c, w=None: RatioOfSums(c, "n", where=w), "s"),
    "DuplicateRowCount": (lambda c, w=None: DuplicateRowCount(c, where=w), "m"),
    "ExactQuantile": (lambda c, w=None: ExactQuantile(c, 0.5, where=w), "s"),
    "InterquartileRange": (lambda c, w=None: InterquartileRange(c, where=w), "s"),
    "HistogramBinned": (lambda c, w=None: Histogram(c, where=w, bins=(0, 1, 2)), "s"),
}
GOOD_COLUMN = {"PatternMatch": "s", "MinLength": "s", "MaxLength": "s", "DataType": "s"}
ZERO_WHEN_EMPTY = {"CountDistinct", "ApproxCountDistinct", "ZerosCount", "DuplicateRowCount"}


@pytest.fixture(scope="module")
def data(spark):
    return spark.createDataFrame(ROWS, SCHEMA)


def good(name: str):  # type: ignore[no-untyped-def]
    make, _ = FACTORIES[name]
    return make(GOOD_COLUMN.get(name, "n"))


def test_every_analyzer_computes_on_good_input(data) -> None:
    analyzers = [good(name) for name in FACTORIES]
    result = run_analysis(data, analyzers)
    assert [a for a in analyzers if not result.metric(a).ok] == []


def test_missing_columns_and_wrong_types_are_errors_beside_working_analyzers(data) -> None:
    missing = [make("nope") for make, _ in FACTORIES.values()]
    wrong = [make(column) for make, column in FACTORIES.values() if column is not None]
    working = [good(name) for name in FACTORIES]
    result = run_analysis(data, [*missing, *wrong, *working, Size()])
    for analyzer in missing:
        assert "column 'nope' does not exist" in result.metric(analyzer).error
    for analyzer in wrong:
        assert "has type" in result.metric(analyzer).error, analyzer
    assert all(result.metric(a).ok for a in working)
    assert result.metric(Size()).value == 3.0
    # the bad analyzers cost nothing: one scan, one sketch pass at most, one grouping query
    assert result.spark_actions <= 3


def test_empty_input_and_filtered_away_rows(data, spark) -> None:
    """Every analyzer at once (one run on empty input, one with a filter that keeps nothing):
    the runner isolates analyzers, so each one's result is its own."""
    empty = spark.createDataFrame([], SCHEMA)
    plain = {name: make(GOOD_COLUMN.get(name, "n")) for name, (make, _) in FACTORIES.items()}
    nothing = {
        name: make(GOOD_COLUMN.get(name, "n"), "n > 100") for name, (make, _) in FACTORIES.items()
    }
    on_empty = run_analysis(empty, list(plain.values()))
    filtered = run_analysis(data, list(nothing.values()))
    for name in FACTORIES:
        for metric in (on_empty.metric(plain[name]), filtered.metric(nothing[name])):
            if name in ZERO_WHEN_EMPTY:
                assert metric.value == 0.0, name
            else:
                assert not metric.ok and "Empty state" in metric.error, name
