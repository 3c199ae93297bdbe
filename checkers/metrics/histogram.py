"""Histogram: value counts of one column (or of numeric bins) from its frequency table."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from pyspark.sql import Column, Window
from pyspark.sql import functions as F
from pyspark.sql.types import DataType, IntegerType, StructType

from checkers.metrics import _bins
from checkers.metrics._analyzer import (
    FrequencyAnalyzer,
    FrequencySummary,
    FrequencyView,
    SingleColumn,
)
from checkers.metrics._metric import EmptyStateError, MetricValue
from checkers.metrics._schema import is_numeric

NULL_VALUE = "NullValue"


@dataclass(frozen=True, repr=False)
class Histogram(SingleColumn, FrequencyAnalyzer):
    """Value counts of one column (NULL shown as "NullValue"): the number of bins, and the
    `max_detail_bins` most frequent values with absolute counts and ratios. Unlike Deequ, ratios
    with a `where` are over the filtered rows, not the whole dataset.

    With `bins` (edges of a numeric column) values are counted per bin `[a, b)` (the last bin
    closed) instead: every bin is listed in edge order, zeros included, then "OutOfRange" and
    "NullValue" when present; `number_of_bins` is the number of bins. The bin is computed
    before the frequency table, so binned histograms share the run's one grouping query."""

    keeps_null_rows: ClassVar[bool] = True
    column: str
    where: str | None = None
    max_detail_bins: int = 1000
    bins: tuple[float, ...] | None = None

    def __post_init__(self) -> None:
        if not 1 <= self.max_detail_bins <= 1000:
            raise ValueError("Histogram max_detail_bins must be within 1..1000")
        if self.bins is not None:
            object.__setattr__(self, "bins", _bins.checked_edges(self.bins))

    @property
    def grouping_columns(self) -> tuple[str, ...]:
        return self.columns if self.bins is None else (f"{self.column} binned {self.bins}",)

    def key_source(self, name: str) -> Column:
        if self.bins is None:
            return super().key_source(name)
        return _bins.bin_index(F.col(self.column).cast("double"), self.bins)

    def key_type(self, schema: StructType, name: str) -> DataType | None:
        return super().key_type(schema, name) if self.bins is None else IntegerType()

    def column_type_error(self, dtype: DataType) -> str | None:
        if self.bins is not None and not is_numeric(dtype):
            return "bins need a numeric column"
        return super().column_type_error(dtype)

    def _label(self, view: FrequencyView) -> Column:
        (key,) = self.grouping_columns
        return F.coalesce(view.key(key).cast("string"), F.lit(NULL_VALUE))

    def window_columns(self, view: FrequencyView) -> dict[str, Column]:
        if self.bins is not None:  # every bin is listed: no ranking
            return {}
        order = Window.partitionBy(*view.window_partition()).orderBy(
            view.count.desc(), self._label(view)
        )
        return {f"{view.name_prefix}_rank": F.row_number().over(order)}

    def extra_aggregations(self, view: FrequencyView) -> list[Column]:
        top = view.set_condition
        if self.bins is None:
            top = top & (F.col(f"{view.name_prefix}_rank") <= self.max_detail_bins)
        return [
            F.collect_list(
                F.when(top, F.struct(self._label(view).alias("value"), view.count.alias("n")))
            )
        ]

    def value_from_frequencies(
        self, summary: FrequencySummary, extras: Sequence[object]
    ) -> MetricValue:
        total, detail = summary.all_rows, extras[0] or []
        if total == 0:
            raise EmptyStateError(f"Empty state for {self!r}: no rows")
        rows = sorted(((r["value"], int(r["n"])) for r in detail), key=lambda x: (-x[1], x[0]))  # type: ignore[attr-defined]
        if self.bins is not None:
            return self._binned(dict(rows), total)
        return {
            "number_of_bins": summary.all_groups,
            "values": {v: {"absolute": n, "ratio": n / total} for v, n in rows},
        }

    def _binned(self, counts: dict[str, int], total: int) -> MetricValue:
        assert self.bins is not None
        labels = {str(i): _bins.bin_label(self.bins, i) for i in range(len(self.bins) - 1)}
        labels[str(_bins.OUT_OF_RANGE_INDEX)] = _bins.OUT_OF_RANGE
        labels[NULL_VALUE] = NULL_VALUE
        values = {
            label: {"absolute": n, "ratio": n / total}
            for key, label in labels.items()
            if (n := counts.get(key, 0)) or key.isdigit()
        }
        return {"number_of_bins": len(self.bins) - 1, "values": values}
