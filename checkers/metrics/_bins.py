"""Numeric bins for Histogram: a bin index per row, computed in the DataFrame API before the
frequency table is built, and the bins' labels."""

from __future__ import annotations

import itertools
from collections.abc import Sequence

from pyspark.sql import Column
from pyspark.sql import functions as F

OUT_OF_RANGE = "OutOfRange"
OUT_OF_RANGE_INDEX = -1
MAX_BINS = 1000


def checked_edges(edges: Sequence[float]) -> tuple[float, ...]:
    """Edges as floats; raises ValueError unless they are at least two and strictly increasing."""
    values = tuple(float(e) for e in edges)
    if not 2 <= len(values) <= MAX_BINS + 1:
        raise ValueError(f"Histogram bins need 2..{MAX_BINS + 1} edges, got {len(values)}")
    if any(a >= b for a, b in itertools.pairwise(values)):
        raise ValueError(f"Histogram bin edges must be strictly increasing, got {list(values)}")
    return values


def bin_index(value: Column, edges: tuple[float, ...]) -> Column:
    """The bin of `value`: i for [edges[i], edges[i+1]) (the last bin also holds its upper
    edge), -1 outside every bin (NaN included), NULL for NULL. A balanced tree of comparisons:
    about log2(bins) per row."""

    def within(first: int, last: int) -> Column:  # bins first..last-1
        if last - first == 1:
            upper = edges[first + 1]
            below = value <= upper if last == len(edges) - 1 else value < upper
            return F.when((value >= edges[first]) & below, F.lit(first)).otherwise(
                F.lit(OUT_OF_RANGE_INDEX)
            )
        middle = (first + last) // 2
        return F.when(value < edges[middle], within(first, middle)).otherwise(within(middle, last))

    return F.when(value.isNotNull(), within(0, len(edges) - 1))


def bin_label(edges: tuple[float, ...], index: int) -> str:
    """`[0.0, 10.0)`; the last bin is closed: `[10.0, 20.0]`."""
    closing = "]" if index == len(edges) - 2 else ")"
    return f"[{edges[index]!r}, {edges[index + 1]!r}{closing}"
