"""`ConsistencyChecker`: two sources compared by a key with the work pushed into each
engine (see hashdiff). Its elements are keys; a key missing on one side, a row whose columns
differ, or a key occurring more than once is a failing element, so tolerances, levels, samples,
failing keys and KnownBroken keys work as for every other checker."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from checkers.checker import CheckerPlan, CheckerResult
from checkers.consistency.hashdiff import (
    DIFFERING,
    DUPLICATE_KEY,
    FIRST_LEVEL_CELLS,
    MISSING_IN_LEFT,
    MISSING_IN_RIGHT,
    Comparison,
    compare,
)
from checkers.consistency.jdbc_side import JdbcSide
from checkers.consistency.normalise import Rules
from checkers.consistency.sides import Key, Side
from checkers.consistency.spark_side import SparkSide
from checkers.consistency.sql_side import SqlSide, SqlTable
from checkers.metrics import Analyzer, Metric
from checkers.parsers._base import Parser
from checkers.parsers.jdbc import JdbcParser
from checkers.row_checkers import RowPredicateChecker
from checkers.spark import spark_session
from checkers.tolerances import KnownBroken

Source = SqlTable | JdbcParser | DataFrame | Side


class ConsistencyChecker(RowPredicateChecker):
    """`left` and `right` (each a `SqlTable` or a `JdbcParser`, compared inside its database, or
    a DataFrame compared in Spark) must hold the same rows by `key`: one column or several, of
    any kind but float (one integer column places rows by itself; any other key by a hash of
    its canonical texts, the same in every engine). `columns` are
    compared (default: every column both sides have); floats within `float_tolerance` are
    equal. Ranges of keys are checksummed on each side and split `bisection_factor` ways where
    the checksums differ (the first level cuts the key range into at most `first_level_cells`);
    rows are fetched only for ranges of at most `bisection_threshold` rows. When most ranges of a
    level differ, the next level is cut at once to ranges of a few rows.

    Reported beside the counts: `missing_in_left`, `missing_in_right`, `differing`,
    `duplicate_keys`, `null_keys_left/right`, and the cost: `rows_fetched_left/right`,
    `queries_left/right`, `levels`, `deep_cut` (1 when most ranges of a level differed).
    """

    def __init__(
        self,
        left: Source,
        right: Source,
        *,
        key: str | Sequence[str],
        columns: Sequence[str] | None = None,
        float_tolerance: float = Rules.float_tolerance,
        trim_trailing_spaces: bool = True,
        bisection_factor: int = 32,
        bisection_threshold: int = 64,
        first_level_cells: int = FIRST_LEVEL_CELLS,
        name: str | None = None,
    ) -> None:
        if not key or (not isinstance(key, str) and not all(isinstance(k, str) for k in key)):
            raise ValueError("key names the key's column or columns: key='id' or ['a', 'b']")
        if bisection_factor < 2 or bisection_threshold < 1:
            raise ValueError(
                "bisection_factor must be at least 2 and bisection_threshold at least 1"
            )
        if float_tolerance < 0:
            raise ValueError("float_tolerance must not be negative")
        super().__init__(key=key, name=name)
        self.left = as_side(left, "left")
        self.right = as_side(right, "right")
        self.columns = None if columns is None else tuple(columns)
        self.rules = Rules(
            float_tolerance=float_tolerance, trim_trailing_spaces=trim_trailing_spaces
        )
        self.factor = bisection_factor
        self.threshold = bisection_threshold
        self.first_cells = first_level_cells
        self.comparison: Comparison | None = None

    def _spark(self) -> SparkSession:
        for side in (self.left, self.right):
            if isinstance(side, SparkSide):
                return side.frame.sparkSession
        return SparkSession.getActiveSession() or spark_session()

    def frame(self) -> DataFrame:
        spark = self._spark()
        for side in (self.left, self.right):
            if isinstance(side, JdbcSide):
                side.spark = spark
        comparison = compare(
            self.left,
            self.right,
            self.key,
            self.columns,
            self.rules,
            factor=self.factor,
            threshold=self.threshold,
            first_cells=self.first_cells,
        )
        self.comparison = comparison
        rows = [tuple(row.values()) for row in self.differences()]
        key_type = "STRING" if comparison.hashed else "BIGINT"
        keys = ", ".join(f"`{name.replace('`', '``')}` {key_type}" for name in self.key)
        schema = f"{keys}, difference STRING, columns STRING, left STRING, right STRING"
        return spark.createDataFrame(rows, schema)

    def differences(self) -> list[dict[str, object]]:
        """The last run's differences, one row each: the key, which difference, the columns
        that differ, and each side's values of them (JSON)."""
        if self.comparison is None:
            return []
        return [
            {
                **self._key_values(d.key),
                "difference": d.kind,
                "columns": ", ".join(d.columns) or None,
                "left": _json(d.left),
                "right": _json(d.right),
            }
            for d in self.comparison.differences
        ]

    def _key_values(self, key: Key) -> dict[str, object]:
        if isinstance(key, tuple):
            return dict(zip(self.key, key, strict=True))
        return {self.key[0]: key}

    def condition(self, frame: DataFrame) -> Column:
        return F.lit(False)  # every row of the differences is a failing element

    def breakdown(self, frame: DataFrame) -> dict[str, Column]:
        kinds = (MISSING_IN_LEFT, MISSING_IN_RIGHT, DIFFERING, DUPLICATE_KEY)
        return {kind: F.col("difference") == F.lit(kind) for kind in kinds}

    def plan(self, excused: Sequence[KnownBroken] = ()) -> CheckerPlan:
        planned = super().plan(excused)
        comparison = self.comparison
        assert comparison is not None

        def finish(metrics: Mapping[Analyzer, Metric]) -> CheckerResult:
            result = planned.finish(metrics)
            if result.error is not None:
                return result
            # Counted, not listed: rows without a key, duplicated keys beyond those listed.
            unlisted = sum(comparison.null_keys) + comparison.duplicates_unlisted
            result.failing += unlisted
            result.unexcused += unlisted
            result.total = comparison.elements
            result.rows = sum(comparison.rows)
            result.metrics = {
                **{k: v for k, v in result.metrics.items() if k not in ("failing", "unexcused")},
                "failing": result.failing,
                "unexcused": result.unexcused,
                "rows": result.rows,
                DUPLICATE_KEY + "s": sum(comparison.duplicate_keys),
                "rows_left": comparison.rows[0],
                "rows_right": comparison.rows[1],
                "null_keys_left": comparison.null_keys[0],
                "null_keys_right": comparison.null_keys[1],
                "rows_fetched_left": comparison.rows_fetched[0],
                "rows_fetched_right": comparison.rows_fetched[1],
                "queries_left": comparison.queries[0],
                "queries_right": comparison.queries[1],
                "levels": comparison.levels,
                "deep_cut": int(comparison.deep_cut),
            }
            result.metrics.pop(DUPLICATE_KEY, None)
            return result

        return CheckerPlan(planned.frame, planned.analyzers, finish)


def _json(values: dict[str, object] | None) -> str | None:
    return None if values is None else json.dumps(values, ensure_ascii=False, default=str)


def as_side(source: Source, role: str) -> Side:
    if isinstance(source, Side):
        source.role = role
        return source
    if isinstance(source, SqlTable):
        return SqlSide(source, role)
    if isinstance(source, JdbcParser):
        return JdbcSide(source, role)
    if isinstance(source, Parser):
        raise ValueError(
            f"the {role} side is a {type(source).__name__}: give its DataFrame (compared in "
            "Spark), or for a database table a SqlTable or a JdbcParser (compared inside it)"
        )
    if isinstance(source, DataFrame) or hasattr(source, "schema"):
        return SparkSide(source, role)
    raise ValueError(
        f"the {role} side is {type(source).__name__}: give a SqlTable(url, table) or a DataFrame"
    )
