"""Replaying a metric's history through an anomaly constraint, to see what a sensitivity would
cost before turning it on: how many alerts a week it would have raised, and, with synthetic
faults injected into the replayed series, how many of them it would have caught (recall).

The replay judges each point against the points before it exactly as a run would (the same
annotations, floor and sensitivity; a point it flags leaves later training, as a failed run
does). Faults are injected one at a time at evenly spread points, each judged against the real
history before it."""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from checkers.metrics.annotations import SeriesPoint
from checkers.metrics.check import AnomalySpec
from checkers.metrics.metric_history import Judged, Judging, judge_value
from checkers.metrics.sensitivity import SENSITIVITIES

#: Each fault as what it does to the metric at the point it hits.
FAULTS: dict[str, Callable[[float], float]] = {
    "volume drop 50%": lambda v: v * 0.5,
    "spike": lambda v: v * 2.0,
    # a burst of NULLs: 30% of the values lost (a completeness or non-null count falls by 30%)
    "null burst": lambda v: v * 0.7,
    "missing partition": lambda v: 0.0,
    # a shift of the distribution: the level moves by 30% and stays there
    "distribution shift": lambda v: v * 1.3,
}
#: A shift lasts this many points; caught when any of them is flagged.
SHIFT_POINTS = 7
#: At most this many injections of each fault kind.
INJECTIONS = 20
WEEK = dt.timedelta(days=7)


@dataclass(frozen=True)
class Replay:
    """One sensitivity's replay of a series."""

    sensitivity: str
    judged: int  # points that had enough history to be judged
    alerts: int
    alerts_per_week: float
    recall: dict[str, float | None]  # by fault kind; None when nothing could be injected


def backtest(
    points: Sequence[SeriesPoint],
    spec: AnomalySpec,
    judging: Judging,
    *,
    inject: bool = False,
    sensitivities: Sequence[str] = tuple(SENSITIVITIES),
) -> list[Replay]:
    """The replay of `points` (a metric's history, oldest first) at each sensitivity."""
    return [
        _replay(points, spec, dataclasses.replace(judging, sensitivity=s), s, inject)
        for s in sensitivities
    ]


def _replay(
    points: Sequence[SeriesPoint], spec: AnomalySpec, judging: Judging, name: str, inject: bool
) -> Replay:
    replayed: list[SeriesPoint] = []  # the history as the replay leaves it
    judged_at: list[int] = []
    alerts = 0
    for point in points:
        reason, note = _judge(point.value, point.time, replayed, spec, judging)
        if reason is not None or _judged(note or ""):
            judged_at.append(len(replayed))
        alerts += reason is not None
        replayed.append(dataclasses.replace(point, failed=reason is not None))
    weeks = _weeks(points, judged_at)
    recall: dict[str, float | None] = dict.fromkeys(FAULTS)
    if inject:
        recall = _recall(replayed, judged_at, spec, judging)
    return Replay(name, len(judged_at), alerts, alerts / weeks if weeks else 0.0, recall)


def _recall(
    replayed: list[SeriesPoint], judged_at: list[int], spec: AnomalySpec, judging: Judging
) -> dict[str, float | None]:
    step = max(1, len(judged_at) // INJECTIONS)
    positions = judged_at[::step][:INJECTIONS]
    found: dict[str, float | None] = {}
    for kind, fault in FAULTS.items():
        if not positions:
            found[kind] = None
            continue
        lasting = SHIFT_POINTS if kind == "distribution shift" else 1
        caught = sum(_caught(replayed, p, fault, lasting, spec, judging) for p in positions)
        found[kind] = caught / len(positions)
    return found


def _caught(
    replayed: list[SeriesPoint],
    position: int,
    fault: Callable[[float], float],
    lasting: int,
    spec: AnomalySpec,
    judging: Judging,
) -> bool:
    """Whether the fault injected at `position` (for `lasting` points) is flagged."""
    history = list(replayed[:position])
    for point in replayed[position : position + lasting]:
        value = fault(point.value)
        reason, _ = _judge(value, point.time, history, spec, judging)
        if reason is not None:
            return True
        history.append(dataclasses.replace(point, value=value, failed=False))
    return False


def _judge(
    value: float,
    at: dt.datetime,
    earlier: Sequence[SeriesPoint],
    spec: AnomalySpec,
    judging: Judging,
) -> tuple[str | None, str | None]:
    return judge_value(value, earlier, Judged(at, "earlier points", "value"), spec, judging)


def _judged(note: str) -> bool:
    """Whether a point that passed had enough history to be judged (bounds that say something)."""
    return not note.startswith("not judged") and "[-inf, inf]" not in note


def _weeks(points: Sequence[SeriesPoint], judged_at: list[int]) -> float:
    if not judged_at:
        return 0.0
    span = points[judged_at[-1]].time - points[judged_at[0]].time + dt.timedelta(days=1)
    return max(span / WEEK, 1 / 7)
