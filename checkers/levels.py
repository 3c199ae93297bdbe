"""Alert levels and the thresholds that turn failing counts into a level (no Spark here: alerting
imports this module)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum
from typing import Protocol


class AlertLevel(IntEnum):
    """How severe a failure is; ordered, so `max(levels)` is the worst."""

    OK = 0
    WARNING = 1
    ERROR = 2
    CRITICAL = 3

    def raised(self) -> AlertLevel:
        """One level up (escalation); CRITICAL stays CRITICAL."""
        return AlertLevel(min(self + 1, AlertLevel.CRITICAL))


class AlertLevelPolicy(Protocol):
    """Decides the level of a failure that the tolerance did not accept (`failing` > 0). The
    built-in policies also `explain(failing, total)` which threshold set it (see `level_reason`)."""

    def level(self, failing: int, total: int) -> AlertLevel: ...


def level_reason(policy: AlertLevelPolicy, failing: int, total: int) -> str:
    """Which threshold set the level of `failing` of `total`, in words: "ERROR: 12 failing >
    warning threshold 10, <= error threshold 100". A policy without `explain` is named."""
    explain = getattr(policy, "explain", None)
    if callable(explain):
        return str(explain(failing, total))
    found = policy.level(failing, total)
    return f"{found.name}: {failing:,} failing, as {type(policy).__name__}.level answered"


def _percent(share: float) -> str:
    return f"{share * 100:.4g}%"


def _whole(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


@dataclass(frozen=True)
class FailingElementsThresholds:
    """WARNING up to `warning` failing elements, ERROR up to `error`, CRITICAL above.

    >>> FailingElementsThresholds(warning=10, error=100).level(50, 1000)
    <AlertLevel.ERROR: 2>
    """

    warning: int
    error: int

    def __post_init__(self) -> None:
        if not all(_whole(v) for v in (self.warning, self.error)):
            raise TypeError(
                f"FailingElementsThresholds counts failing elements: warning and error must be "
                f"whole numbers, e.g. FailingElementsThresholds(warning=10, error=100), got "
                f"warning={self.warning!r}, error={self.error!r}"
            )
        if not 0 <= self.warning <= self.error:
            raise ValueError(
                f"FailingElementsThresholds needs 0 <= warning <= error, got "
                f"warning={self.warning}, error={self.error}"
                + ("; swap them" if self.warning > self.error >= 0 else "")
            )

    def level(self, failing: int, total: int) -> AlertLevel:
        if failing <= self.warning:
            return AlertLevel.WARNING
        return AlertLevel.ERROR if failing <= self.error else AlertLevel.CRITICAL

    def explain(self, failing: int, total: int) -> str:
        found = self.level(failing, total)
        if found is AlertLevel.WARNING:
            return f"WARNING: {failing:,} failing <= warning threshold {self.warning:,}"
        if found is AlertLevel.ERROR:
            return (
                f"ERROR: {failing:,} failing > warning threshold {self.warning:,}, "
                f"<= error threshold {self.error:,}"
            )
        return f"CRITICAL: {failing:,} failing > error threshold {self.error:,}"


@dataclass(frozen=True)
class FailingShareThresholds:
    """Like `FailingElementsThresholds`, on the share of failing elements (0..1)."""

    warning: float
    error: float

    def __post_init__(self) -> None:
        if not all(_number(v) for v in (self.warning, self.error)):
            raise TypeError(
                f"FailingShareThresholds takes shares as numbers from 0 to 1, e.g. "
                f"FailingShareThresholds(warning=0.01, error=0.05), got "
                f"warning={self.warning!r}, error={self.error!r}"
            )
        if not 0.0 <= self.warning <= self.error <= 1.0:
            raise ValueError(
                f"FailingShareThresholds needs 0 <= warning <= error <= 1 (0.05 is 5%), got "
                f"warning={self.warning}, error={self.error}"
                + ("; swap them" if self.warning > self.error >= 0 else "")
            )

    def level(self, failing: int, total: int) -> AlertLevel:
        share = failing / total if total else 1.0
        if share <= self.warning:
            return AlertLevel.WARNING
        return AlertLevel.ERROR if share <= self.error else AlertLevel.CRITICAL

    def explain(self, failing: int, total: int) -> str:
        found = self.level(failing, total)
        share = f"{_percent(failing / total if total else 1.0)} failing ({failing:,} of {total:,})"
        warning, error = _percent(self.warning), _percent(self.error)
        if found is AlertLevel.WARNING:
            return f"WARNING: {share} <= warning threshold {warning}"
        if found is AlertLevel.ERROR:
            return f"ERROR: {share} > warning threshold {warning}, <= error threshold {error}"
        return f"CRITICAL: {share} > error threshold {error}"


@dataclass(frozen=True)
class FixedLevel:
    """Every unaccepted failure has the same level (for checks where any failure is equally bad)."""

    value: AlertLevel = AlertLevel.ERROR

    def __post_init__(self) -> None:
        if not isinstance(self.value, AlertLevel):
            raise TypeError(
                f"FixedLevel needs an AlertLevel, e.g. AlertLevel.ERROR, got {self.value!r}"
            )

    def level(self, failing: int, total: int) -> AlertLevel:
        return self.value

    def explain(self, failing: int, total: int) -> str:
        return f"{self.value.name}: FixedLevel, any unaccepted failure ({failing:,} failing)"
