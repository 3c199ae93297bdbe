"""How eager an anomaly check is: `sensitivity` (low, medium, high) scales the width a strategy
allows, and `min_change` is an absolute floor below which nothing is an anomaly. Medium is the
strategy as written; low allows 1.5 times the width (fewer alerts), high two thirds of it."""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence

from checkers.metrics.anomaly import AnomalyStrategy

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
    """`strategy` with its width scaled for `sensitivity` (each strategy's `scaled`): the factors
    of the normal and seasonal strategies (and the seasonal minimum relative change), the allowed
    changes of the change strategies (a rate's distance from 1). A SimpleThreshold has fixed
    bounds: unchanged."""
    scale = SENSITIVITIES[sensitivity or "medium"]
    return strategy if scale == 1.0 else strategy.scaled(scale)


def below_floor(value: float, history: Sequence[float | None], min_change: float | None) -> bool:
    """Whether `value` is within `min_change` of the history's median (too small to alert)."""
    known = [v for v in history if v is not None]
    if not min_change or not known:
        return False
    return abs(value - statistics.median(known)) < min_change
