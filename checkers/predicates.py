"""Predicates: a Spark Column, a Spark SQL string, or a Python callable. Columns and SQL run
natively; a callable runs in Python workers on batches of rows (a pandas UDF), which is slower but
lets a team express anything."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd
from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql.types import BooleanType

#: A Column, a SQL expression, or a Python function of row dicts returning True or False.
Predicate = Column | str | Callable[..., object]


def _records(frame: pd.DataFrame) -> list[dict[str, object]]:
    # NaN/NaT become None, so a Python predicate sees SQL NULL as None.
    return frame.astype(object).where(frame.notna(), None).to_dict("records")


def verdict(value: object) -> bool:
    """A Python predicate's answer: True or False (numpy's too). Anything else ("yes", 1, NaN,
    None) is refused, naming it: `bool()` would turn "no" into a pass."""
    if isinstance(value, bool | np.bool_):
        return bool(value)
    raise TypeError(
        f"a Python predicate must return True or False, it returned {value!r:.60} "
        f"({type(value).__name__})"
    )


def python_condition(function: Callable[..., object], arguments: Sequence[str]) -> Column:
    """A boolean Column calling `function(*row dicts)` on each row, one dict per struct column
    named in `arguments` (or one dict of all named columns when they are not structs)."""

    names = list(arguments)

    def call(row: dict[str, object]) -> bool:
        values = [row[n] for n in names]
        # Spark evaluates UDFs before CASE picks a branch: a missing side never reaches `function`.
        return not any(v is None for v in values) and verdict(function(*values))

    @F.pandas_udf(BooleanType())  # type: ignore[call-overload]
    def evaluate(frame: pd.DataFrame) -> pd.Series:
        return pd.Series([call(row) for row in _records(frame)], dtype=bool)

    return evaluate(F.struct(*names))  # type: ignore[no-any-return]


def python_row_condition(function: Callable[..., object], columns: Sequence[str]) -> Column:
    """A boolean Column calling `function(row)` with a dict of `columns` for each row."""

    @F.pandas_udf(BooleanType())  # type: ignore[call-overload]
    def evaluate(frame: pd.DataFrame) -> pd.Series:
        return pd.Series([verdict(function(row)) for row in _records(frame)], dtype=bool)

    return evaluate(F.struct(*[F.col(f"`{c}`") for c in columns]))  # type: ignore[no-any-return]


def as_condition(
    predicate: Predicate,
    *,
    row_columns: Sequence[str] = (),
    struct_arguments: Sequence[str] = (),
) -> Column:
    """The predicate as a Column. A callable gets each row's `row_columns` as one dict, or
    (when `struct_arguments` is given) one dict per named struct column."""
    if isinstance(predicate, Column):
        return predicate
    if isinstance(predicate, str):
        return F.expr(predicate)
    if callable(predicate):
        if struct_arguments:
            return python_condition(predicate, struct_arguments)
        return python_row_condition(predicate, row_columns)
    raise TypeError(
        f"a predicate is a Column, a SQL string or a callable, not {type(predicate).__name__}"
    )


def failing(condition: Column) -> Column:
    """TRUE where a row fails: the predicate is FALSE or NULL."""
    return ~F.coalesce(condition, F.lit(False))
