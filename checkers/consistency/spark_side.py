"""The Spark side of a consistency comparison: a DataFrame (files, tables) compared in Spark with
the DataFrame API only."""

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
    Key,
    KeyPlan,
    RowPlan,
    Selection,
    Side,
    Unsupported,
    as_int,
    fetched_row,
    key_of,
)
from checkers.errors import describe_failure
from checkers.parsers._base import SourceError


class SparkSide(Side):
    """A DataFrame: its engine is Spark (files, tables)."""

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

    def _key_texts(self, key: KeyPlan) -> list[Column]:
        return [
            normalise.spark_text(F.col(quoted(c)), kind, key.rules)
            for c, kind in zip(key.columns, key.kinds, strict=True)
        ]

    def _position(self, key: KeyPlan) -> Column:
        if not key.hashed:
            return F.col(quoted(key.columns[0])).cast("long")
        return normalise.spark_position(
            normalise.spark_digest(self._key_texts(key), key.text_kinds)
        )

    def _keyed(self, key: KeyPlan) -> Column:
        condition = F.lit(True)
        for c in key.columns:
            condition = condition & F.col(quoted(c)).isNotNull()
        return condition

    def _key_outputs(self, key: KeyPlan) -> list[Column]:
        if not key.hashed:
            return [F.col(quoted(key.columns[0]))]
        return self._key_texts(key)

    def bounds(self, key: KeyPlan) -> Bounds:
        position, keyed = self._position(key), self._keyed(key)
        row = self._collect(
            self.frame.agg(
                F.min(F.when(keyed, position)),
                F.max(F.when(keyed, position)),
                F.count(F.lit(1)),
                F.count(F.when(keyed, F.lit(1))),
            )
        )[0]
        return Bounds(as_int(row[0]), as_int(row[1]), int(row[2]), int(row[2]) - int(row[3]))

    def _selected(self, key: KeyPlan, selected: Selection) -> DataFrame:
        """The keyed rows selected: a set of cell numbers (one hash lookup per row), not a chain
        of range conditions, which Spark evaluates slowly once there are hundreds."""
        keyed = self.frame.filter(self._keyed(key))
        if selected.ranges is None:
            return keyed
        cell = F.expr(f"(dq_selected - {selected.low}) div {selected.unit}")  # exact
        with_position = keyed.withColumn("dq_selected", self._position(key))
        return with_position.filter(cell.isin(selected.cells())).drop("dq_selected")

    def _texts(self, plan: RowPlan) -> list[Column]:
        return [
            normalise.spark_text(F.col(quoted(c)), kind, plan.rules)
            for c, kind in zip(plan.columns, plan.kinds, strict=True)
        ]

    def cells(
        self, key: KeyPlan, plan: RowPlan, selected: Selection, low: int, width: int
    ) -> dict[int, Cell]:
        texts = [*self._key_texts(key), *self._texts(plan)]
        text_kinds = [*key.text_kinds, *(kind == "text" for kind in plan.kinds)]
        named = [f"dq_t{n}" for n in range(len(texts))]
        cell = F.expr(f"(dq_k - {low}) div {width}")  # exact, >= 0
        high, low_bits = normalise.spark_halves(F.col("dq_m"))
        # Projections one after the other: Spark keeps an expensive expression used twice (a
        # text, the digest) in its own projection rather than computing it twice.
        frame = self._selected(key, selected).select(
            self._position(key).alias("dq_k"),
            *[t.alias(n) for t, n in zip(texts, named, strict=True)],
        )
        digest = normalise.spark_digest([F.col(n) for n in named], text_kinds)
        frame = frame.select("dq_k", digest.alias("dq_m"))
        frame = frame.select(cell.alias("cell"), high.alias("high"), low_bits.alias("low"))
        grouped = frame.groupBy("cell").agg(F.count(F.lit(1)), F.sum("high"), F.sum("low"))
        return {
            int(r[0]): (int(r[1]), normalise.exact_checksum(int(r[2]), int(r[3])))
            for r in self._collect(grouped)
        }

    def duplicates(self, key: KeyPlan) -> tuple[int, dict[Key, int]]:
        names = [f"dq_k{n}" for n in range(len(key.columns))]
        outputs = [o.alias(n) for o, n in zip(self._key_outputs(key), names, strict=True)]
        grouped = self.frame.filter(self._keyed(key)).groupBy(*outputs).count()
        grouped = grouped.filter(F.col("count") > 1)
        listed = self._collect(grouped.orderBy(*names).limit(DUPLICATES_LISTED))
        total = len(listed)
        if total == DUPLICATES_LISTED:
            total = int(self._collect(grouped.agg(F.count(F.lit(1))))[0][0])
        return total, {key_of(row, key): int(row[-1]) for row in listed}

    def rows(self, key: KeyPlan, plan: RowPlan, selected: Selection) -> list[Fetched]:
        floats = [F.col(quoted(c)).cast("double") for c in plan.float_columns]
        outputs = [*self._key_outputs(key), *self._texts(plan), *floats]
        frame = self._selected(key, selected).select(
            *[o.alias(f"dq_o{n}") for n, o in enumerate(outputs)]
        )
        fetched = [fetched_row(row, key, len(plan.columns)) for row in self._collect(frame)]
        self.rows_fetched += len(fetched)
        return fetched
