"""Sketch analyzers: ApproxCountDistinct (HLL), ApproxQuantile(s) and InterquartileRange (KLL).

Spark's native DataSketches aggregates build the sketches; the state is the sketch's bytes, merged
in Python with the `datasketches` package, so merging states never needs Spark.

Quantiles use the inclusive rank rule: the answer for `q` over n values is the ceil(q*n)-th
smallest (the smallest for q = 0). It is the rule of Spark's GK digest behind Deequ's
ApproxQuantile, so both give the same answers while the data is small enough for either sketch
to be exact (n <= 50 at Deequ's relative error 0.01; n <= k = 200 for ours)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import ClassVar

import datasketches as ds
from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql.types import DataType, StructType

from checkers.metrics._analyzer import ScanShareableAnalyzer, SingleColumn, filtered
from checkers.metrics._metric import EmptyStateError
from checkers.metrics._schema import (
    column,
    is_atomic,
    is_numeric,
    resolve_type,
    sketchable_directly,
)
from checkers.metrics._serde import state_kind
from checkers.metrics.agreement import HLL_DEVIATIONS, Agreement

DEFAULT_HLL_LG_K = 12  # 4,096 registers: about 1.6% relative standard error
DEFAULT_KLL_K = 200  # about 1.65% normalized rank error (99% confidence)


@state_kind("hll")
@dataclass(frozen=True)
class HllState:
    """A serialized HyperLogLog sketch (HLL_4, compact)."""

    sketch: bytes
    lg_k: int = DEFAULT_HLL_LG_K

    @classmethod
    def zero(cls, lg_k: int = DEFAULT_HLL_LG_K) -> HllState:
        return cls(ds.hll_sketch(lg_k).serialize_compact(), lg_k)

    def merge(self, other: HllState) -> HllState:
        lg_k = max(self.lg_k, other.lg_k)
        union = ds.hll_union(lg_k)
        union.update(ds.hll_sketch.deserialize(self.sketch))
        union.update(ds.hll_sketch.deserialize(other.sketch))
        merged = union.get_result(ds.tgt_hll_type.HLL_4)
        return HllState(merged.serialize_compact(), merged.lg_config_k)

    def estimate(self) -> float:
        return float(ds.hll_sketch.deserialize(self.sketch).get_estimate())


@state_kind("kll")
@dataclass(frozen=True)
class KllState:
    """A serialized KLL quantile sketch of doubles."""

    sketch: bytes

    @classmethod
    def zero(cls, k: int = DEFAULT_KLL_K) -> KllState:
        return cls(ds.kll_doubles_sketch(k).serialize())

    def merge(self, other: KllState) -> KllState:
        merged = ds.kll_doubles_sketch.deserialize(self.sketch)
        merged.merge(ds.kll_doubles_sketch.deserialize(other.sketch))
        return KllState(merged.serialize())

    def load(self) -> ds.kll_doubles_sketch:
        return ds.kll_doubles_sketch.deserialize(self.sketch)


class _Sketch(SingleColumn, ScanShareableAnalyzer):
    is_sketch: ClassVar[bool] = True
    column: str
    where: str | None


@dataclass(frozen=True, repr=False)
class ApproxCountDistinct(_Sketch):
    """Approximate number of distinct non-NULL values (HyperLogLog, `lg_k` log2 registers)."""

    column: str
    where: str | None = None
    lg_k: int = DEFAULT_HLL_LG_K

    def __post_init__(self) -> None:
        if not 4 <= self.lg_k <= 21:
            raise ValueError(f"ApproxCountDistinct lg_k must be within 4..21, got {self.lg_k}")

    def column_type_error(self, dtype: DataType) -> str | None:
        return None if is_atomic(dtype) else "nested values cannot be sketched"

    def aggregations(self, schema: StructType) -> list[Column]:
        dtype = resolve_type(schema, self.column)
        values = column(self.column)
        if dtype is not None and not sketchable_directly(dtype):
            values = values.cast("string")
        return [F.hll_sketch_agg(filtered(values, self.where), self.lg_k)]

    def state_from_aggregates(self, values: Sequence[object]) -> HllState:
        if values[0] is None:
            return HllState.zero(self.lg_k)
        return HllState(bytes(values[0]), self.lg_k)  # type: ignore[call-overload]

    def zero_state(self) -> HllState:
        return HllState.zero(self.lg_k)

    def compute_value(self, state: HllState) -> float:  # type: ignore[override]
        # A count of distinct values is whole: Deequ rounds its estimate (Math.round) too.
        return float(math.floor(state.estimate() + 0.5))

    def agreement(self, state: HllState) -> Agreement:  # type: ignore[override]
        # A union of sketches estimates differently from one sketch of the whole (an
        # out-of-order sketch loses the HIP estimator): within the sketch's own error bounds.
        sketch = ds.hll_sketch.deserialize(state.sketch)
        low = math.floor(sketch.get_lower_bound(HLL_DEVIATIONS))
        high = math.ceil(sketch.get_upper_bound(HLL_DEVIATIONS))
        return Agreement({"": (low, high)}, f"HLL error, {HLL_DEVIATIONS} standard deviations")


class _Quantiles(_Sketch):
    k: int

    def column_type_error(self, dtype: DataType) -> str | None:
        return None if is_numeric(dtype) else "a numeric column is required"

    def aggregations(self, schema: StructType) -> list[Column]:
        values = filtered(column(self.column).cast("double"), self.where)
        return [F.kll_sketch_agg_double(values, self.k)]

    def state_from_aggregates(self, values: Sequence[object]) -> KllState:
        if values[0] is None:
            return KllState.zero(self.k)
        return KllState(bytes(values[0]))  # type: ignore[call-overload]

    def zero_state(self) -> KllState:
        return KllState.zero(self.k)

    def loaded(self, state: KllState) -> ds.kll_doubles_sketch:
        sketch = state.load()
        if sketch.is_empty():
            raise EmptyStateError(f"Empty state for {self!r}: all input values were NULL")
        return sketch

    def rank_bounds(self, state: KllState) -> tuple[Callable[[float], tuple[float, float]], str]:
        """For a quantile q, the values a recomputation from scratch may answer: each sketch's
        answer has a rank within its normalized rank error of q, so merged partitions' and a
        fresh sketch's answers lie within twice that in rank: the values this sketch puts at
        q minus and plus twice its error. And why, in words."""
        sketch = self.loaded(state)
        error = sketch.normalized_rank_error(False)

        def at(rank: float) -> float:
            return float(sketch.get_quantile(min(1.0, max(0.0, rank)), inclusive=True))

        def bounds(q: float) -> tuple[float, float]:
            return at(q - 2 * error), at(q + 2 * error)

        return bounds, f"KLL rank error {error:.4f} (k={self.k}), twice"


def _check_quantile(q: float) -> None:
    if not 0.0 <= q <= 1.0:
        raise ValueError(f"quantiles must be within [0, 1], got {q}")


@dataclass(frozen=True, repr=False)
class ApproxQuantile(_Quantiles):
    """Approximate `quantile` of a numeric column (KLL sketch; the answer is a data value)."""

    column: str
    quantile: float
    where: str | None = None
    k: int = DEFAULT_KLL_K

    def __post_init__(self) -> None:
        _check_quantile(self.quantile)

    @property
    def metric_name(self) -> str:
        return f"ApproxQuantile-{self.quantile}"

    def agreement(self, state: KllState) -> Agreement:  # type: ignore[override]
        bounds, why = self.rank_bounds(state)
        return Agreement({"": bounds(self.quantile)}, why)

    def compute_value(self, state: KllState) -> float:  # type: ignore[override]
        return float(self.loaded(state).get_quantile(self.quantile, inclusive=True))


@dataclass(frozen=True, repr=False)
class ApproxQuantiles(_Quantiles):
    """Several approximate quantiles from one sketch; the value maps `str(q)` to the quantile."""

    column: str
    quantiles: tuple[float, ...]
    where: str | None = None
    k: int = DEFAULT_KLL_K

    def __post_init__(self) -> None:
        object.__setattr__(self, "quantiles", tuple(float(q) for q in self.quantiles))
        if not self.quantiles:
            raise ValueError("ApproxQuantiles needs at least one quantile")
        for q in self.quantiles:
            _check_quantile(q)

    def compute_value(self, state: KllState) -> dict[str, object]:  # type: ignore[override]
        sketch = self.loaded(state)
        return {str(q): float(sketch.get_quantile(q, inclusive=True)) for q in self.quantiles}

    def agreement(self, state: KllState) -> Agreement:  # type: ignore[override]
        bounds, why = self.rank_bounds(state)
        return Agreement({str(q): bounds(q) for q in self.quantiles}, why)


def interpolated_quantile(sketch: ds.kll_doubles_sketch, q: float) -> float:
    """The `q` quantile as Spark's exact `percentile` defines it, read from a sketch: position
    q*(n-1) among the sorted values, interpolated linearly between its two neighbours. Exact while
    the sketch holds every value; within the sketch's rank error beyond."""
    n = sketch.n
    position = (n - 1) * q
    low, high = math.floor(position), math.ceil(position)

    def value_at(index: int) -> float:  # the (index+1)-th smallest: a rank between index and +1
        return float(sketch.get_quantile((index + 0.5) / n, inclusive=True))

    lower = value_at(low)
    if high == low:
        return lower
    return (high - position) * lower + (position - low) * value_at(high)


@dataclass(frozen=True, repr=False)
class InterquartileRange(_Quantiles):
    """Q3 - Q1 of a numeric column, each quartile interpolated as Spark's `percentile` does, from
    the KLL sketch: exact (Deequ's value) while the sketch holds every value, approximate beyond,
    and mergeable unlike Deequ's exact state."""

    column: str
    where: str | None = None
    k: int = DEFAULT_KLL_K

    def compute_value(self, state: KllState) -> float:  # type: ignore[override]
        sketch = self.loaded(state)
        return interpolated_quantile(sketch, 0.75) - interpolated_quantile(sketch, 0.25)

    def agreement(self, state: KllState) -> Agreement:  # type: ignore[override]
        bounds, why = self.rank_bounds(state)
        (q1_low, q1_high), (q3_low, q3_high) = bounds(0.25), bounds(0.75)
        return Agreement({"": (q3_low - q1_high, q3_high - q1_low)}, why)
