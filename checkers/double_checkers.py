"""Checkers over two datasets side by side (possibly read from two different stores): row by row
on join keys, or, for very large tables, by comparing aggregates per key group."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from checkers._keys import key_columns, quoted
from checkers.predicates import Answer, Predicate, as_answer
from checkers.row_checkers import RowPredicateChecker


class PredicateDoubleDatasetsChecker(RowPredicateChecker):
    """Rows of `left` and `right` matched on the `on` columns must satisfy `predicate`, which sees
    the structs `left` and `right` (`"left.amount = right.amount"`; a Python function gets two
    dicts). With no predicate, only presence is compared. A key present on one side only is a
    failing element unless `fail_missing_in_left` / `fail_missing_in_right` say otherwise. NULL
    keys never match, as in SQL, unless `null_keys_match`. Keys should be unique on each side:
    duplicates multiply rows.

    Reported beside the counts: `missing_in_left`, `missing_in_right`, `mismatched`.
    """

    def __init__(
        self,
        left: DataFrame,
        right: DataFrame,
        predicate: Predicate | None = None,
        *,
        on: Sequence[str] | str,
        fail_missing_in_left: bool = True,
        fail_missing_in_right: bool = True,
        null_keys_match: bool = False,
        name: str | None = None,
    ) -> None:
        keys = (on,) if isinstance(on, str) else tuple(on)
        if not keys:
            raise ValueError("a double-dataset checker needs join keys: on=[...]")
        super().__init__(key=keys, name=name)
        self.left = left
        self.right = right
        self.predicate = predicate
        self.fail_missing_in_left = fail_missing_in_left
        self.fail_missing_in_right = fail_missing_in_right
        self.null_keys_match = null_keys_match

    def incremental_problem(self, partition_columns: Sequence[str]) -> str | None:
        return (
            f"{type(self).__name__} joins two datasets: a key of one partition may match a row "
            "of any partition of the other side, so it cannot be evaluated per partition. "
            "Compare the datasets in a check that is not incremental"
        )

    def frame(self) -> DataFrame:
        def side(df: DataFrame, name: str) -> DataFrame:
            row = F.struct(*[F.col(quoted(c)) for c in df.columns])
            found = key_columns(df, self.key, role="join key column", of=name)
            keys = [c.alias(f"__{name}_{n}") for n, c in enumerate(found)]
            return df.select(*keys, row.alias(name))

        left, right = side(self.left, "left"), side(self.right, "right")
        condition = F.lit(True)
        for n in range(len(self.key)):
            a, b = left[f"__left_{n}"], right[f"__right_{n}"]
            condition = condition & (a.eqNullSafe(b) if self.null_keys_match else a == b)
        joined = left.join(right, condition, "full")
        keys = [
            F.coalesce(F.col(f"__left_{n}"), F.col(f"__right_{n}")).alias(k)
            for n, k in enumerate(self.key)
        ]
        return joined.select(*keys, "left", "right")

    def _matches(self) -> Answer:
        if self.predicate is None:
            return Answer(F.lit(True))
        found = as_answer(self.predicate, struct_arguments=("left", "right"))
        return Answer(F.coalesce(found.condition, F.lit(False)), found.problem)

    def answer(self, frame: DataFrame) -> Answer:
        has_left, has_right = F.col("left").isNotNull(), F.col("right").isNotNull()
        matches = self._matches()
        condition = (
            F.when(has_left & has_right, matches.condition)
            .when(has_left, F.lit(not self.fail_missing_in_right))
            .otherwise(F.lit(not self.fail_missing_in_left))
        )
        return Answer(condition, matches.problem)

    def breakdown(self, frame: DataFrame) -> dict[str, Column]:
        has_left, has_right = F.col("left").isNotNull(), F.col("right").isNotNull()
        return {
            "missing_in_left": ~has_left,
            "missing_in_right": ~has_right,
            "mismatched": has_left & has_right & ~self._matches().condition,
        }


class AggregateComparisonChecker(PredicateDoubleDatasetsChecker):
    """Compare aggregates per key group instead of rows: each side is grouped `by` the key
    columns, the same `aggregates` are computed on both, and each group is an element that fails
    when a value differs by more than `max(absolute, relative * max(|left|, |right|))` or when the
    group exists on one side only. Cheap for very large tables: only the groups are joined.
    `right_aggregates` computes the same names differently on the right (for a side that arrives
    pre-aggregated, such as a GROUP BY pushed down to an operational database).

    >>> AggregateComparisonChecker(ops, lake, by=["day"],
    ...     aggregates={"flights": "count(*)", "delay": "sum(dep_delay)"}, relative=0.001)
    """

    def __init__(
        self,
        left: DataFrame,
        right: DataFrame,
        *,
        by: Sequence[str] | str,
        aggregates: Mapping[str, str | Column],
        right_aggregates: Mapping[str, str | Column] | None = None,
        absolute: float = 0.0,
        relative: float = 0.0,
        fail_missing_in_left: bool = True,
        fail_missing_in_right: bool = True,
        name: str | None = None,
    ) -> None:
        if not aggregates:
            raise ValueError("AggregateComparisonChecker needs aggregates={name: expression}")
        if absolute < 0 or relative < 0:
            raise ValueError("tolerances absolute= and relative= cannot be negative")
        keys = (by,) if isinstance(by, str) else tuple(by)
        if right_aggregates is not None and set(right_aggregates) != set(aggregates):
            raise ValueError("right_aggregates must name the same values as aggregates")
        self.aggregates = dict(aggregates)
        self.absolute = absolute
        self.relative = relative
        super().__init__(
            self._grouped(left, keys, self.aggregates),
            self._grouped(right, keys, dict(right_aggregates or aggregates)),
            self._within_tolerance(),
            on=keys,
            fail_missing_in_left=fail_missing_in_left,
            fail_missing_in_right=fail_missing_in_right,
            null_keys_match=True,  # a NULL group is a group like any other
            name=name,
        )

    @staticmethod
    def _grouped(
        df: DataFrame, keys: tuple[str, ...], aggregates: Mapping[str, str | Column]
    ) -> DataFrame:
        columns = [
            (F.expr(agg) if isinstance(agg, str) else agg).cast("double").alias(name)
            for name, agg in aggregates.items()
        ]
        groups = [
            c.alias(k)
            for c, k in zip(key_columns(df, keys, role="group column"), keys, strict=True)
        ]
        return df.groupBy(*groups).agg(*columns)

    def _within_tolerance(self) -> Column:
        condition = F.lit(True)
        for name in self.aggregates:
            left, right = F.col(f"left.`{name}`"), F.col(f"right.`{name}`")
            allowed = F.greatest(
                F.lit(float(self.absolute)),
                F.lit(float(self.relative)) * F.greatest(F.abs(left), F.abs(right)),
            )
            close = left.eqNullSafe(right) | (F.abs(left - right) <= allowed)
            condition = condition & F.coalesce(close, F.lit(False))
        return condition
