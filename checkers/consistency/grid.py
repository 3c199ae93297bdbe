"""The grid a comparison cuts key positions into: a level's differing cells merged into ranges,
and, after a level where most cells differ, the ranges and cell width of the deep cut that
follows it (checkers.consistency.hashdiff)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator

from checkers.consistency.sides import Range

#: Cells a level must hold for "most of them differ" to mean the differences are spread (with
#: a handful of cells, a few differences make most of them differ, and cutting finer pays).
DEEP_CUT_MIN_CELLS = 64
#: Most rows of one key range when the differing cells of a level most of whose cells differ are
#: selected as ranges (with the equal cells between them).
SPAN_ROWS = 1_000_000


def merged(ranges: Iterable[Range]) -> list[Range]:
    """The ranges in order, overlapping or touching ones joined."""
    merged: list[Range] = []
    for start, stop in sorted(ranges):
        if merged and merged[-1][1] >= start:
            merged[-1] = (merged[-1][0], max(merged[-1][1], stop))
        else:
            merged.append((start, stop))
    return merged


def deep_width(width: int, rows: int, differing: int, threshold: int) -> int:
    """The width of the cells that follow a level where most of `differing` cells holding `rows`
    rows differ. With d differences spread over R rows, cells of w rows send R / w cells' sums
    out of each side, then about d x w rows: least in all near w = sqrt(R / d) (counting a
    fetched row as costly as 4 cells' sums: its every column against a count and a checksum),
    at most `threshold` rows. `differing` stands for d (at least that many differences)."""
    per_cell = max(1, round(math.sqrt(rows / (4 * differing))))
    return max(1, width * min(per_cell, threshold) * differing // rows)


def spans(cells: list[tuple[Range, int, bool]]) -> Iterator[Range]:
    """Key ranges covering the differing cells, in order, each of at most `SPAN_ROWS` rows (or
    one cell): the equal cells between two differing ones come along (a range is one condition
    an index serves; most cells differ, so they are few), those at either end do not."""
    start: int | None = None
    stop = held = between = 0  # rows of the range so far, of equal cells since its last differing
    for (first, last), rows, differs in cells:
        if start is not None and held + between + rows > SPAN_ROWS:
            yield start, stop
            start = None
        if start is None:
            if differs:
                start, stop, held, between = first, last, rows, 0
        elif differs:
            stop, held, between = last, held + between + rows, 0
        else:
            between += rows
    if start is not None:
        yield start, stop
