"""Column profiles in a fixed number of Spark passes, whatever the number of columns: one engine
run for completeness, approximate distinct counts, types, lengths and numeric statistics of all
columns (Deequ's `NumericColumnProfile` statistics); one grouping query for the value histograms
of all low-cardinality columns."""

from __future__ import annotations

from dataclasses import dataclass, field

from pyspark.sql import DataFrame
from pyspark.sql.types import BooleanType, NumericType, StringType

from checkers.metrics._analyzer import Analyzer
from checkers.metrics.counts import Completeness, Size, ZerosCount
from checkers.metrics.datatype import DataType
from checkers.metrics.extremes import Maximum, MaxLength, Minimum, MinLength
from checkers.metrics.higher_moments import Kurtosis, Skewness
from checkers.metrics.histogram import Histogram
from checkers.metrics.moments import Mean, StandardDeviation, Sum, Variance
from checkers.metrics.runner import run_analysis
from checkers.metrics.sketches import ApproxCountDistinct, ApproxQuantiles, InterquartileRange

QUANTILES = (0.25, 0.5, 0.75)
#: Deequ's `approxPercentiles`: the 1st to the 99th percentile, from the same sketch as QUANTILES.
PERCENTILES = tuple(i / 100 for i in range(1, 100))


@dataclass(frozen=True)
class ColumnProfile:
    column: str
    spark_type: str
    completeness: float
    approx_distinct: float
    inferred_type: str | None = None  # strings: what their values look like
    minimum: float | None = None
    maximum: float | None = None
    mean: float | None = None
    stddev: float | None = None  # population, as Deequ's stdDev
    quantiles: dict[str, float] | None = None
    sum: float | None = None
    variance: float | None = None  # population, as Deequ's variance
    skewness: float | None = None
    kurtosis: float | None = None  # excess kurtosis (0 for a normal distribution)
    zeros_count: int | None = None
    interquartile_range: float | None = None
    approx_percentiles: tuple[float, ...] | None = None  # the 1st to the 99th percentile
    min_length: float | None = None
    max_length: float | None = None
    histogram: dict[str, int] | None = None  # value -> count (NULL as "NullValue")

    @property
    def numeric(self) -> bool:
        return self.minimum is not None or self.mean is not None

    @property
    def range(self) -> float | None:
        """Maximum - minimum (Deequ's `Range` analyzer keeps exactly these two values)."""
        if self.minimum is None or self.maximum is None:
            return None
        return self.maximum - self.minimum


@dataclass
class Profiles:
    num_records: int
    columns: dict[str, ColumnProfile] = field(default_factory=dict)
    spark_actions: int = 0


def _column_analyzers(name: str, dtype: object) -> dict[str, Analyzer]:
    found: dict[str, Analyzer] = {
        "completeness": Completeness(name),
        "approx_distinct": ApproxCountDistinct(name),
    }
    if isinstance(dtype, StringType):
        found.update(
            inferred_type=DataType(name), min_length=MinLength(name), max_length=MaxLength(name)
        )
    elif isinstance(dtype, NumericType) and not isinstance(dtype, BooleanType):
        found.update(
            minimum=Minimum(name),
            maximum=Maximum(name),
            mean=Mean(name),
            stddev=StandardDeviation(name),
            approx_percentiles=ApproxQuantiles(name, PERCENTILES),
            sum=Sum(name),
            variance=Variance(name),
            skewness=Skewness(name),
            kurtosis=Kurtosis(name),
            zeros_count=ZerosCount(name),
            interquartile_range=InterquartileRange(name),
        )
    return found


def _readable(values: dict[str, object]) -> dict[str, object]:
    """Metric values as profile fields: the inferred type's name, counts as ints, and the
    quartiles and percentiles read from the one percentile metric."""
    typed = values.get("inferred_type")
    if isinstance(typed, dict):
        values["inferred_type"] = typed["inferred_type"]
    if isinstance(values.get("zeros_count"), float):
        values["zeros_count"] = int(values["zeros_count"])  # type: ignore[call-overload]
    percentiles = values.get("approx_percentiles")
    if isinstance(percentiles, dict):
        values["quantiles"] = {str(q): percentiles[str(q)] for q in QUANTILES}
        values["approx_percentiles"] = tuple(percentiles[str(q)] for q in PERCENTILES)
    return values


def profile(
    df: DataFrame, *, columns: list[str] | None = None, low_cardinality_threshold: int = 120
) -> Profiles:
    """Profiles of `columns` (default all) in two engine runs."""
    fields = [f for f in df.schema.fields if columns is None or f.name in columns]
    plans = {f.name: (f, _column_analyzers(f.name, f.dataType)) for f in fields}
    first = run_analysis(df, [Size(), *(a for _, found in plans.values() for a in found.values())])
    size = first.metrics[Size()]
    records = int(size.value) if size.ok else 0  # type: ignore[arg-type]
    values: dict[str, dict[str, object]] = {}
    for name, (_, found) in plans.items():
        values[name] = _readable(
            {key: first.metrics[a].value for key, a in found.items() if first.metrics[a].ok}
        )
    low_cardinality = [
        name
        for name, v in values.items()
        if isinstance(v.get("approx_distinct"), float)
        and v["approx_distinct"] <= low_cardinality_threshold  # type: ignore[operator]
    ]
    actions = first.spark_actions
    if low_cardinality:
        second = run_analysis(df, [Histogram(name) for name in low_cardinality])
        actions += second.spark_actions
        for name in low_cardinality:
            metric = second.metrics[Histogram(name)]
            if metric.ok:
                bins: dict[str, dict[str, float]] = metric.value["values"]  # type: ignore[index,assignment]
                values[name]["histogram"] = {k: int(v["absolute"]) for k, v in bins.items()}
    profiles = {
        name: ColumnProfile(
            column=name,
            spark_type=f.dataType.simpleString(),
            completeness=float(values[name].get("completeness", 0.0)),  # type: ignore[arg-type]
            approx_distinct=float(values[name].get("approx_distinct", 0.0)),  # type: ignore[arg-type]
            **{
                k: v
                for k, v in values[name].items()
                if k not in ("completeness", "approx_distinct")
            },  # type: ignore[arg-type]
        )
        for name, (f, _) in plans.items()
    }
    return Profiles(records, profiles, actions)
