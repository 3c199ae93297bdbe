"""The Spark side of a consistency comparison: a DataFrame (files, tables, a JDBC read) compared
in Spark with the DataFrame API only."""

from __future__ import annotations

from typing import Any

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from checkers._keys import quoted
from checkers.consistency import normalise
from checkers.consistency.normalise import Kind
from checkers.consistency.sides import (
    DUPLICATES_LISTED,
    Bounds,
    Cell,
    Fetched,
    RowPlan,
    Selection,
    Side,
    Unsupported,
    as_int,
    fetched_row,
)
from checkers.errors import describe_failure
from checkers.parsers._base import SourceError


class SparkSide(Side):
    """A DataFrame: its engine is Spark (files, tables, a JDBC read)."""

    def __init__(self, frame: DataFrame, role: str, source: str | None = None) -> None:
        super().__init__()
        self.frame = frame
        self.role = role
        self.source = source or "the DataFrame"

    def describe(self) -> str:
        return self.source

    def kinds(self) -> dict[str, Kind]:
        found: dict[str, Kind] = {}
        for item in self.frame.schema.fields:
            try:
                found[item.name] = normalise.kind_of_spark(item.dataType)
            except ValueError as exc:
                found[item.name] = Unsupported(str(exc))  # type: ignore[assignment]
        return found

    def _collect(self, frame: DataFrame) -> list[Any]:
        self.queries += 1
        try:
            return frame.collect()
        except Exception as exc:
            raise SourceError(f"{self.describe()}: {describe_failure(exc)}") from exc

    def bounds(self, key: str) -> Bounds:
        k = F.col(quoted(key))
        row = self._collect(self.frame.agg(F.min(k), F.max(k), F.count(F.lit(1)), F.count(k)))[0]
        return Bounds(as_int(row[0]), as_int(row[1]), int(row[2]), int(row[2]) - int(row[3]))

    def _selected(self, key: str, selected: Selection) -> DataFrame:
        """The selected rows: a set of cell numbers (one hash lookup per row), not a chain of
        range conditions, which Spark evaluates slowly once there are hundreds."""
        if selected.ranges is None:
            return self.frame
        cell = F.expr(f"(CAST({quoted(key)} AS BIGINT) - {selected.low}) div {selected.unit}")
        return self.frame.filter(cell.isin(selected.cells()))

    def _texts(self, plan: RowPlan) -> list[Column]:
        return [
            normalise.spark_text(F.col(quoted(c)), kind, plan.rules)
            for c, kind in zip(plan.columns, plan.kinds, strict=True)
        ]

    def cells(
        self, key: str, plan: RowPlan, selected: Selection, low: int, width: int
    ) -> dict[int, Cell]:
        k = F.col(quoted(key))
        texts = [normalise.spark_text(k, "integer", plan.rules), *self._texts(plan)]
        text_kinds = [False, *(kind == "text" for kind in plan.kinds)]
        named = [f"dq_t{n}" for n in range(len(texts))]
        cell = F.expr(f"(CAST(dq_k AS BIGINT) - {low}) div {width}")  # exact, >= 0
        high, low_bits = normalise.spark_halves(F.col("dq_m"))
        # Projections one after the other: Spark keeps an expensive expression used twice (a
        # text, the digest) in its own projection rather than computing it twice.
        frame = self._selected(key, selected).select(
            k.alias("dq_k"), *[t.alias(n) for t, n in zip(texts, named, strict=True)]
        )
        digest = normalise.spark_digest([F.col(n) for n in named], text_kinds)
        frame = frame.select("dq_k", digest.alias("dq_m"))
        frame = frame.select(cell.alias("cell"), high.alias("high"), low_bits.alias("low"))
        grouped = frame.groupBy("cell").agg(F.count(F.lit(1)), F.sum("high"), F.sum("low"))
        return {
            int(r[0]): (int(r[1]), normalise.exact_checksum(int(r[2]), int(r[3])))
            for r in self._collect(grouped)
        }

    def duplicates(self, key: str) -> tuple[int, dict[int, int]]:
        k = F.col(quoted(key))
        grouped = self.frame.filter(k.isNotNull()).groupBy(k.alias("k")).count()
        grouped = grouped.filter(F.col("count") > 1)
        listed = self._collect(grouped.orderBy("k").limit(DUPLICATES_LISTED))
        total = len(listed)
        if total == DUPLICATES_LISTED:
            total = int(self._collect(grouped.agg(F.count(F.lit(1))))[0][0])
        return total, {int(r[0]): int(r[1]) for r in listed}

    def rows(self, key: str, plan: RowPlan, selected: Selection) -> list[Fetched]:
        k = F.col(quoted(key))
        floats = [F.col(quoted(c)).cast("double") for c in plan.float_columns]
        frame = self._selected(key, selected).select(k, *self._texts(plan), *floats)
        fetched = [fetched_row(row, len(plan.columns)) for row in self._collect(frame)]
        self.rows_fetched += len(fetched)
        return fetched
