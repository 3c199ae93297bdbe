"""How eager an anomaly check is: `sensitivity` (low, medium, high) scales the width a strategy
allows, and `min_change` is an absolute floor below which nothing is an anomaly. Medium is the
strategy as written; low allows 1.5 times the width (fewer alerts), high two thirds of it."""

from __future__ import annotations

import dataclasses
import math
import statistics
from collections.abc import Sequence

from checkers.metrics.anomaly import (
    AnomalyStrategy,
    BatchNormal,
    OnlineNormal,
    RelativeRateOfChange,
    Seasonal,
    _ChangeStrategy,
)

SENSITIVITIES = {"low": 1.5, "medium": 1.0, "high": 2 / 3}


def sensitivity_problem(sensitivity: object, min_change: object) -> str | None:
    """Why these settings are wrong (None when they are right): said at definition time."""
    if sensitivity is not None and sensitivity not in SENSITIVITIES:
        return f"sensitivity must be one of {', '.join(SENSITIVITIES)}, got {sensitivity!r}"
    if min_change is not None and (
        isinstance(min_change, bool)
        or not isinstance(min_change, int | float)
        or not math.isfinite(min_change)
        or min_change < 0
    ):
        return f"min_change must be a number >= 0 (an absolute change), got {min_change!r}"
    return None


def tuned(strategy: AnomalyStrategy, sensitivity: str | None) -> AnomalyStrategy:
    """`strategy` with its width scaled for `sensitivity`: the factors of the normal and seasonal
    strategies (and the seasonal minimum relative change), the allowed changes of the change
    strategies (a rate's distance from 1). A SimpleThreshold has fixed bounds: unchanged."""
    scale = SENSITIVITIES[sensitivity or "medium"]
    if scale == 1.0:
        return strategy
    if isinstance(strategy, OnlineNormal | BatchNormal):
        return dataclasses.replace(
            strategy,
            lower_factor=_times(strategy.lower_factor, scale),
            upper_factor=_times(strategy.upper_factor, scale),
        )
    if isinstance(strategy, Seasonal):
        return dataclasses.replace(
            strategy,
            factor=strategy.factor * scale,
            min_relative_change=strategy.min_relative_change * scale,
        )
    if isinstance(strategy, RelativeRateOfChange):
        return dataclasses.replace(
            strategy,
            max_decrease=_around_one(strategy.max_decrease, scale),
            max_increase=_around_one(strategy.max_increase, scale),
        )
    if isinstance(strategy, _ChangeStrategy):
        return dataclasses.replace(
            strategy,
            max_decrease=_times(strategy.max_decrease, scale),
            max_increase=_times(strategy.max_increase, scale),
        )
    return strategy


def below_floor(value: float, history: Sequence[float | None], min_change: float | None) -> bool:
    """Whether `value` is within `min_change` of the history's median (too small to alert)."""
    known = [v for v in history if v is not None]
    if not min_change or not known:
        return False
    return abs(value - statistics.median(known)) < min_change


def _times(value: float | None, scale: float) -> float | None:
    return None if value is None else value * scale


def _around_one(value: float | None, scale: float) -> float | None:
    return None if value is None else max(0.0, 1 + (value - 1) * scale)
