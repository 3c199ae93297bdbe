"""ExactQuantile: Spark's exact `percentile`, read from the column's frequency table.

Deequ computes it with `percentile` in its shared scan; that state is one number, which cannot be
merged. Ours is the frequency table (value -> count) that the grouping analyzers of the column
already share: it merges exactly (counts add per value), so appends and partition views keep
exact quantiles. The cost is a frequency table of one row per distinct value, sorted once per
run to find the two values around the quantile's position: cheap for columns with few distinct
values, as costly as `percentile` itself (which also keeps one entry per distinct value) for
continuous ones."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from pyspark.sql import Column, Window
from pyspark.sql import functions as F
from pyspark.sql.types import DataType

from checkers.metrics._analyzer import (
    FrequencyAnalyzer,
    FrequencySummary,
    FrequencyView,
    SingleColumn,
)
from checkers.metrics._metric import EmptyStateError, MetricValue
from checkers.metrics._schema import is_numeric


@dataclass(frozen=True, repr=False)
class ExactQuantile(SingleColumn, FrequencyAnalyzer):
    """The exact `quantile` of a numeric column as Spark's `percentile` defines it: position
    q*(n-1) among the n sorted non-NULL values, interpolated linearly between its neighbours
    (the median of 1, 2, 3, 4 is 2.5)."""

    column: str
    quantile: float
    where: str | None = None

    def __post_init__(self) -> None:
        if not 0.0 <= self.quantile <= 1.0:
            raise ValueError(f"quantiles must be within [0, 1], got {self.quantile}")

    @property
    def metric_name(self) -> str:
        return f"ExactQuantile-{self.quantile}"

    def column_type_error(self, dtype: DataType) -> str | None:
        return None if is_numeric(dtype) else "a numeric column is required"

    def _names(self, view: FrequencyView) -> tuple[str, str]:
        # Named after the key column, not the analyzer: every quantile of the column (and of
        # other sets stacked in the same key column) shares the two window columns.
        key = view.key_names[self.column]
        return f"__dq_cum_{key}", f"__dq_total_{key}"

    def window_columns(self, view: FrequencyView) -> dict[str, Column]:
        key = view.key(self.column)
        counted = F.when(key.isNotNull(), view.count)
        by_set = Window.partitionBy(*view.window_partition())
        running = by_set.orderBy(key).rowsBetween(Window.unboundedPreceding, Window.currentRow)
        cumulative, total = self._names(view)
        return {cumulative: F.sum(counted).over(running), total: F.sum(counted).over(by_set)}

    def extra_aggregations(self, view: FrequencyView) -> list[Column]:
        key = view.key(self.column)
        cumulative, total = (F.col(n) for n in self._names(view))
        position = (total - 1) * F.lit(self.quantile)
        mine = view.set_condition & key.isNotNull()

        def value_at(index: Column) -> Column:  # the smallest value whose rows reach past index
            return F.min(F.when(mine & (cumulative > index), key)).cast("double")

        return [value_at(F.floor(position)), value_at(F.ceil(position))]

    def value_from_frequencies(
        self, summary: FrequencySummary, extras: Sequence[object]
    ) -> MetricValue:
        if summary.num_rows == 0:
            raise EmptyStateError(f"Empty state for {self!r}: all input values were NULL")
        lower, upper = (float(v) for v in extras)  # type: ignore[arg-type]
        position = (summary.num_rows - 1) * self.quantile
        low, high = math.floor(position), math.ceil(position)
        if high == low:
            return lower
        return (high - position) * lower + (position - low) * upper
