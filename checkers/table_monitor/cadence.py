"""When a table's next load is due, learned from its arrivals: the typical gap after an arrival
on the same weekday (so a table loaded on business days is not late on Monday morning), else
the typical gap overall. Pure functions of the history and `now`."""

from __future__ import annotations

import datetime as dt
import itertools
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

#: Arrivals needed before a cadence is learned (fewer: the table is still learning, not late).
MIN_ARRIVALS = 4
#: Gaps after the same weekday needed to prefer them over all gaps.
MIN_SAME_WEEKDAY = 2


@dataclass(frozen=True)
class Cadence:
    """The gap expected after the newest arrival, and when the table is late without another."""

    expected_gap: dt.timedelta
    due: dt.datetime

    def late(self, now: dt.datetime) -> bool:
        return now > self.due


def learn_cadence(
    times: Sequence[dt.datetime], *, by_partition: bool, late_after: float = 1.5
) -> Cadence | None:
    """The cadence of arrivals at `times` (any order), or None while fewer than MIN_ARRIVALS.
    The table is due `late_after` expected gaps after its newest arrival; a partition counts
    from the end of its period (the smallest gap: a day for daily partitions)."""
    ordered = sorted(set(times))
    if len(ordered) < MIN_ARRIVALS:
        return None
    gaps = [(a.weekday(), b - a) for a, b in itertools.pairwise(ordered)]
    newest = ordered[-1]
    same = [g for day, g in gaps if day == newest.weekday()]
    chosen = same if len(same) >= MIN_SAME_WEEKDAY else [g for _, g in gaps]
    expected = statistics.median_low(chosen)
    period = min(g for _, g in gaps) if by_partition else dt.timedelta(0)
    return Cadence(expected, newest + period + expected * late_after)


def volume_problem(
    rows: Sequence[int | None], *, tolerance: float = 0.3, history: int = 28
) -> str | None:
    """Why the newest arrival's rows are out of line with the `history` before it (None when in
    line, or unknown): off the median by more than `tolerance` of it and three robust standard
    deviations (1.4826 times the median absolute deviation)."""
    if not rows or rows[-1] is None:
        return None
    earlier = [r for r in rows[:-1] if r is not None][-history:]
    if len(earlier) < MIN_ARRIVALS - 1:
        return None
    newest, median = rows[-1], statistics.median(earlier)
    spread = 1.4826 * statistics.median(abs(r - median) for r in earlier)
    band = max(tolerance * median, 3 * spread)
    if abs(newest - median) <= band:
        return None
    return (
        f"the newest load added {newest:,} rows, typically {median:,.0f} "
        f"(expected within ±{band:,.0f})"
    )
