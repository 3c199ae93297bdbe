"""What the tick tells an anomaly check's metric history about the check: its name (the periods
people annotated on it with `dq history annotate` apply), its sensitivity and min_change, and the
maintenance windows covering it, whose points are left out of training, not only muted."""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Callable, Sequence

from alerting.mutes import MaintenanceWindow
from checkers.metric_checker import MetricChecker
from checks.base import QualityCheck


def attach_feedback(checker: object, check: type[QualityCheck], mutes: Sequence[object]) -> None:
    """Name `check` on its MetricChecker's history, with its settings and maintenance windows."""
    if not isinstance(checker, MetricChecker) or checker.history is None:
        return
    checker.history = dataclasses.replace(
        checker.history,
        check=check.name,
        sensitivity=check.sensitivity,
        min_change=check.min_change,
        excluded_when=in_maintenance(check.name, mutes),
    )


def in_maintenance(
    check: str, mutes: Sequence[object]
) -> Callable[[dt.datetime], str | None] | None:
    """Why a point of `check` at a time is in a maintenance window, or None (none covers it)."""
    windows = [m for m in mutes if isinstance(m, MaintenanceWindow)]
    if not windows:
        return None

    def covering(time: dt.datetime) -> str | None:
        return next((w for m in windows if (w := m.mutes(check, time))), None)

    return covering
