"""Predicates: a Spark Column, a Spark SQL string, or a Python callable. Columns and SQL run
natively; a callable runs in Python workers on batches of rows (a pandas UDF), which is slower but
lets a team express anything."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql.types import BooleanType, StringType, StructField, StructType

#: How much of a predicate's exception or wrong answer an error shows.
PROBLEM_CHARS = 300
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


#: What a Python predicate's UDF returns per row: its verdict, or why it has none.
_ANSWER = StructType([StructField("verdict", BooleanType()), StructField("problem", StringType())])


def _answers(verdicts: Iterable[Callable[[], bool]]) -> pd.DataFrame:
    """Each row's verdict, or (when the predicate raised or answered something else than a
    boolean) the problem: the worker never fails, so it is reused and the pass is not retried."""
    found: list[tuple[bool | None, str | None]] = []
    for answer in verdicts:
        try:
            found.append((answer(), None))
        except Exception as exc:
            found.append((None, f"{type(exc).__name__}: {exc}"[:PROBLEM_CHARS]))
    return pd.DataFrame(found, columns=["verdict", "problem"])


@dataclass(frozen=True, eq=False)
class Answer:
    """A predicate as Columns: `condition`, TRUE where a row passes; and for a Python predicate
    `problem`, the text of what went wrong on a row (it raised, or answered something else than
    True or False), NULL elsewhere. Both read one UDF column, so Spark runs the function once."""

    condition: Column
    problem: Column | None = None


def _answer(found: Column) -> Answer:
    return Answer(found["verdict"], found["problem"])


def python_condition(function: Callable[..., object], arguments: Sequence[str]) -> Answer:
    """The Answer of `function(*row dicts)` on each row, one dict per struct column
    named in `arguments` (or one dict of all named columns when they are not structs)."""

    names = list(arguments)

    def call(row: dict[str, object]) -> bool:
        values = [row[n] for n in names]
        # Spark evaluates UDFs before CASE picks a branch: a missing side never reaches `function`.
        return not any(v is None for v in values) and verdict(function(*values))

    @F.pandas_udf(_ANSWER)  # type: ignore[call-overload]
    def evaluate(frame: pd.DataFrame) -> pd.DataFrame:
        return _answers(functools.partial(call, row) for row in _records(frame))

    return _answer(evaluate(F.struct(*names)))


def python_row_condition(function: Callable[..., object], columns: Sequence[str]) -> Answer:
    """The Answer of `function(row)` with a dict of `columns` for each row."""

    @F.pandas_udf(_ANSWER)  # type: ignore[call-overload]
    def evaluate(frame: pd.DataFrame) -> pd.DataFrame:
        return _answers(
            functools.partial(lambda r: verdict(function(r)), row) for row in _records(frame)
        )

    return _answer(evaluate(F.struct(*[F.col(f"`{c}`") for c in columns])))


def as_answer(
    predicate: Predicate,
    *,
    row_columns: Sequence[str] = (),
    struct_arguments: Sequence[str] = (),
) -> Answer:
    """The predicate as Columns. A callable gets each row's `row_columns` as one dict, or
    (when `struct_arguments` is given) one dict per named struct column."""
    if isinstance(predicate, Column):
        return Answer(predicate)
    if isinstance(predicate, str):
        return Answer(F.expr(predicate))
    if callable(predicate):
        if struct_arguments:
            return python_condition(predicate, struct_arguments)
        return python_row_condition(predicate, row_columns)
    raise TypeError(
        f"a predicate is a Column, a SQL string or a callable, not {type(predicate).__name__}"
    )


def problem_error(count: int, example: str | None) -> str:
    """The error of a Python predicate that went wrong on `count` rows, `example` one problem."""
    rows = "row" if count == 1 else "rows"
    return f"the Python predicate went wrong on {count:,} {rows}, e.g. {example}"


def failing(condition: Column) -> Column:
    """TRUE where a row fails: the predicate is FALSE or NULL."""
    return ~F.coalesce(condition, F.lit(False))
