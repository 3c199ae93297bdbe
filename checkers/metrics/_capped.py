"""Collecting one row per segment with a cap: the rows are numbered by segment in the same job and
only the first `cap + 1` segments reach the driver, so a column with millions of values is an
error that says so, never a driver out of memory."""

from __future__ import annotations

from collections.abc import Sequence

from pyspark.sql import DataFrame, Row, Window
from pyspark.sql import functions as F

RANK = "__dq_segment_rank"


class TooManySegmentsError(ValueError):
    """More segments than the cap allows."""

    def __init__(self, by: Sequence[str], cap: int) -> None:
        super().__init__(
            f"more than {cap} segments of {', '.join(by)}: segment by fewer or coarser columns, "
            "or raise max_segments"
        )


def collect_capped(frame: DataFrame, by: Sequence[str], cap: int) -> list[Row]:
    """The rows of `frame` (whose columns start with `by`), at most `cap` distinct values of
    `by`; raises TooManySegmentsError beyond (one Spark job either way)."""
    order = Window.orderBy(*[F.col(b).asc_nulls_first() for b in by])
    numbered = frame.withColumn(RANK, F.dense_rank().over(order))
    rows = numbered.where(F.col(RANK) <= cap + 1).collect()
    if any(row[RANK] > cap for row in rows):
        raise TooManySegmentsError(by, cap)
    return rows
