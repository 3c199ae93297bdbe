"""Column profiles in a fixed number of Spark passes, whatever the number of columns: one engine
run for completeness, approximate distinct counts, types, lengths and numeric statistics of all
columns; one grouping query for the value histograms of all low-cardinality columns."""

from __future__ import annotations

from dataclasses import dataclass, field

from pyspark.sql import DataFrame
from pyspark.sql.types import BooleanType, NumericType, StringType

from checkers.metrics._analyzer import Analyzer
from checkers.metrics.counts import Completeness, Size
from checkers.metrics.datatype import DataType
from checkers.metrics.extremes import Maximum, MaxLength, Minimum, MinLength
from checkers.metrics.histogram import Histogram
from checkers.metrics.moments import Mean, StandardDeviation
from checkers.metrics.runner import run_analysis
from checkers.metrics.sketches import ApproxCountDistinct, ApproxQuantiles

QUANTILES = (0.25, 0.5, 0.75)


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
    stddev: float | None = None
    quantiles: dict[str, float] | None = None
    min_length: float | None = None
    max_length: float | None = None
    histogram: dict[str, int] | None = None  # value -> count (NULL as "NullValue")

    @property
    def numeric(self) -> bool:
        return self.minimum is not None or self.mean is not None


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
            quantiles=ApproxQuantiles(name, QUANTILES),
        )
    return found


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
        values[name] = {
            key: first.metrics[a].value for key, a in found.items() if first.metrics[a].ok
        }
        typed = values[name].get("inferred_type")
        if isinstance(typed, dict):
            values[name]["inferred_type"] = typed["inferred_type"]
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
