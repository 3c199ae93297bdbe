"""Anomaly detection on a metric's history, with Deequ's strategies and a seasonal one. A
strategy looks at a series and says which points in a search range are anomalous, with the
bounds it used."""

from __future__ import annotations

import itertools
import math
import statistics
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import ClassVar


@dataclass(frozen=True)
class Anomaly:
    index: int
    value: float
    lower: float
    upper: float
    detail: str


class AnomalyStrategy(ABC):
    @abstractmethod
    def detect(self, series: Sequence[float], start: int = 0) -> list[Anomaly]:
        """Anomalies among `series[start:]` (earlier points are history)."""

    def bounds(self, series: Sequence[float], index: int) -> tuple[float, float]:
        """The interval the point at `index` was judged against (for reports)."""
        found = [a for a in self.detect(series, index) if a.index == index]
        if found:
            return found[0].lower, found[0].upper
        return self._bounds_when_normal(series, index)

    def _bounds_when_normal(self, series: Sequence[float], index: int) -> tuple[float, float]:
        return -math.inf, math.inf

    def scaled(self, scale: float) -> AnomalyStrategy:
        """This strategy with the width it allows times `scale` (checkers.metrics.sensitivity).
        Fixed bounds (a SimpleThreshold) do not scale."""
        return self


def _times(value: float | None, scale: float) -> float | None:
    return None if value is None else value * scale


def _with_factors_scaled(strategy: OnlineNormal | BatchNormal, scale: float) -> AnomalyStrategy:
    return replace(
        strategy,
        lower_factor=_times(strategy.lower_factor, scale),
        upper_factor=_times(strategy.upper_factor, scale),
    )


def _around_one(value: float | None, scale: float) -> float | None:
    """A rate's allowed distance from 1, scaled."""
    return None if value is None else max(0.0, 1 + (value - 1) * scale)


@dataclass(frozen=True)
class SimpleThreshold(AnomalyStrategy):
    """Anomalous outside [lower, upper]."""

    upper: float = math.inf
    lower: float = -math.inf

    def __post_init__(self) -> None:
        if self.lower > self.upper:
            raise ValueError("SimpleThreshold needs lower <= upper")

    def detect(self, series: Sequence[float], start: int = 0) -> list[Anomaly]:
        return [
            Anomaly(i, v, self.lower, self.upper, f"{v} outside [{self.lower}, {self.upper}]")
            for i, v in enumerate(series)
            if i >= start and not self.lower <= v <= self.upper
        ]

    def _bounds_when_normal(self, series: Sequence[float], index: int) -> tuple[float, float]:
        return self.lower, self.upper


def _diff(series: Sequence[float], order: int) -> list[float]:
    values = list(series)
    for _ in range(order):
        values = [b - a for a, b in itertools.pairwise(values)]
    return values


@dataclass(frozen=True)
class _ChangeStrategy(AnomalyStrategy):
    max_decrease: float | None = None
    max_increase: float | None = None
    order: int = 1

    def __post_init__(self) -> None:
        if self.max_decrease is None and self.max_increase is None:
            raise ValueError(f"{type(self).__name__} needs max_decrease or max_increase")
        if self.order < 1:
            raise ValueError("order must be at least 1")

    @abstractmethod
    def changes(self, series: Sequence[float]) -> list[float]:
        """change[j] belongs to point j + order."""

    def detect(self, series: Sequence[float], start: int = 0) -> list[Anomaly]:
        low = -math.inf if self.max_decrease is None else self.max_decrease
        high = math.inf if self.max_increase is None else self.max_increase
        found = []
        for j, change in enumerate(self.changes(series)):
            i = j + self.order
            if i >= start and (change < low or change > high):
                found.append(
                    Anomaly(i, series[i], low, high, f"change {change:.6g} outside [{low}, {high}]")
                )
        return found

    def scaled(self, scale: float) -> AnomalyStrategy:
        return replace(
            self,
            max_decrease=_times(self.max_decrease, scale),
            max_increase=_times(self.max_increase, scale),
        )


class AbsoluteChange(_ChangeStrategy):
    """The `order`-th difference must stay within [max_decrease, max_increase] (Deequ's
    AbsoluteChangeStrategy); the first `order` points cannot be flagged."""

    def changes(self, series: Sequence[float]) -> list[float]:
        return _diff(series, self.order)


class RelativeRateOfChange(_ChangeStrategy):
    """`x[i] / x[i - order]` must stay within [max_decrease, max_increase]."""

    def changes(self, series: Sequence[float]) -> list[float]:
        return [
            (b / a) if a else math.inf for a, b in zip(series, series[self.order :], strict=False)
        ]

    def scaled(self, scale: float) -> AnomalyStrategy:
        return replace(
            self,
            max_decrease=_around_one(self.max_decrease, scale),
            max_increase=_around_one(self.max_increase, scale),
        )


@dataclass(frozen=True)
class OnlineNormal(AnomalyStrategy):
    """Running mean and (population) standard deviation, Deequ's OnlineNormalStrategy: each
    point is judged against the statistics that include it; the first
    `ignore_start_percentage` of the series is never flagged; flagged points do not enter the
    statistics when `ignore_anomalies`."""

    lower_factor: float | None = 3.0
    upper_factor: float | None = 3.0
    ignore_start_percentage: float = 0.1
    ignore_anomalies: bool = True

    def _walk(self, series: Sequence[float], start: int) -> list[tuple[float, float, bool]]:
        results, mean, sn = [], 0.0, 0.0
        skip = len(series) * self.ignore_start_percentage
        for i, value in enumerate(series):
            last_mean, last_sn = mean, sn
            mean = value if i == 0 else last_mean + (value - last_mean) / (i + 1)
            sn += (value - last_mean) * (value - mean)
            std = math.sqrt(sn / (i + 1))
            low = mean - (math.inf if self.lower_factor is None else self.lower_factor * std)
            high = mean + (math.inf if self.upper_factor is None else self.upper_factor * std)
            anomalous = i >= skip and i >= start and not low <= value <= high
            if anomalous and self.ignore_anomalies:
                mean, sn = last_mean, last_sn
            results.append((low, high, anomalous))
        return results

    def detect(self, series: Sequence[float], start: int = 0) -> list[Anomaly]:
        return [
            Anomaly(i, series[i], low, high, f"{series[i]:.6g} outside [{low:.6g}, {high:.6g}]")
            for i, (low, high, anomalous) in enumerate(self._walk(series, start))
            if anomalous
        ]

    def _bounds_when_normal(self, series: Sequence[float], index: int) -> tuple[float, float]:
        low, high, _ = self._walk(series, index)[index]
        return low, high

    def scaled(self, scale: float) -> AnomalyStrategy:
        return _with_factors_scaled(self, scale)


@dataclass(frozen=True)
class BatchNormal(AnomalyStrategy):
    """Mean and sample standard deviation of the history (the points before `start`, or all
    of them with `include_interval`); points of the search range outside mean ± factor·std."""

    lower_factor: float | None = 3.0
    upper_factor: float | None = 3.0
    include_interval: bool = False

    def _limits(self, series: Sequence[float], start: int) -> tuple[float, float]:
        reference = list(series) if self.include_interval else list(series[:start])
        if len(reference) < 2:
            raise ValueError("BatchNormal needs at least two points of history")
        mean, std = statistics.fmean(reference), statistics.stdev(reference)
        low = -math.inf if self.lower_factor is None else mean - self.lower_factor * std
        high = math.inf if self.upper_factor is None else mean + self.upper_factor * std
        return low, high

    def detect(self, series: Sequence[float], start: int = 0) -> list[Anomaly]:
        low, high = self._limits(series, start)
        return [
            Anomaly(i, v, low, high, f"{v:.6g} outside [{low:.6g}, {high:.6g}]")
            for i, v in enumerate(series)
            if i >= start and not low <= v <= high
        ]

    def _bounds_when_normal(self, series: Sequence[float], index: int) -> tuple[float, float]:
        return self._limits(series, index)

    def scaled(self, scale: float) -> AnomalyStrategy:
        return _with_factors_scaled(self, scale)


@dataclass(frozen=True)
class Seasonal(AnomalyStrategy):
    """Seasonal (weekly for daily metrics: `period=7`; daily for hourly metrics: `period=24`).
    A point is predicted by the median of the same phase in the previous `cycles` cycles; it is
    anomalous when its residual exceeds `factor` robust standard deviations (1.4826 times the median
    absolute residual of the history) and `min_relative_change` of the prediction (very regular
    series would otherwise flag every small wobble). Needs two full cycles of history; robust to
    the holidays and outages a history contains."""

    period: int = 7
    cycles: int = 4
    factor: float = 4.0
    min_relative_change: float = 0.1
    #: Points are positions on the calendar: excluded runs are passed as None (gaps).
    keeps_positions: ClassVar[bool] = True

    def _prediction(self, series: Sequence[float | None], i: int) -> float | None:
        same_phase = [
            series[i - k * self.period]
            for k in range(1, self.cycles + 1)
            if i - k * self.period >= 0
        ]
        known = [v for v in same_phase if v is not None]
        return statistics.median(known) if len(known) >= 2 else None

    def _scale(self, series: Sequence[float | None], end: int) -> float | None:
        residuals = []
        for i in range(end):
            predicted, value = self._prediction(series, i), series[i]
            if predicted is not None and value is not None:
                residuals.append(abs(value - predicted))
        if len(residuals) < self.period:
            return None
        return 1.4826 * statistics.median(residuals) or 1e-9

    def detect(self, series: Sequence[float | None], start: int = 0) -> list[Anomaly]:
        found = []
        for i in range(start, len(series)):
            value = series[i]
            low, high = self._bounds_when_normal(series, i)  # type: ignore[arg-type]
            if value is not None and not low <= value <= high:
                found.append(
                    Anomaly(
                        i,
                        value,
                        low,
                        high,
                        f"{value:.6g} outside seasonal [{low:.6g}, {high:.6g}]",
                    )
                )
        return found

    def _bounds_when_normal(self, series: Sequence[float], index: int) -> tuple[float, float]:
        predicted, scale = self._prediction(series, index), self._scale(series, index)
        if predicted is None or scale is None:
            return -math.inf, math.inf
        width = max(self.factor * scale, self.min_relative_change * abs(predicted))
        return predicted - width, predicted + width

    def scaled(self, scale: float) -> AnomalyStrategy:
        return replace(
            self,
            factor=self.factor * scale,
            min_relative_change=self.min_relative_change * scale,
        )
