from __future__ import annotations

import pytest

from checkers import AlertLevel, FailingElementsThresholds, FailingShareThresholds, FixedLevel


def test_levels_are_ordered_and_raise_by_one():
    assert AlertLevel.OK < AlertLevel.WARNING < AlertLevel.ERROR < AlertLevel.CRITICAL
    assert max([AlertLevel.WARNING, AlertLevel.CRITICAL, AlertLevel.ERROR]) is AlertLevel.CRITICAL
    assert AlertLevel.WARNING.raised() is AlertLevel.ERROR
    assert AlertLevel.CRITICAL.raised() is AlertLevel.CRITICAL


@pytest.mark.parametrize(
    ("failing", "expected"),
    [
        (1, AlertLevel.WARNING),
        (10, AlertLevel.WARNING),
        (11, AlertLevel.ERROR),
        (100, AlertLevel.ERROR),
        (101, AlertLevel.CRITICAL),
    ],
)
def test_failing_elements_thresholds_are_inclusive_upper_bounds(failing, expected):
    assert FailingElementsThresholds(warning=10, error=100).level(failing, 10_000) is expected


@pytest.mark.parametrize(
    ("failing", "expected"),
    [
        (1, AlertLevel.WARNING),
        (10, AlertLevel.WARNING),
        (11, AlertLevel.ERROR),
        (50, AlertLevel.ERROR),
        (51, AlertLevel.CRITICAL),
    ],
)
def test_failing_share_thresholds(failing, expected):
    assert FailingShareThresholds(warning=0.01, error=0.05).level(failing, 1000) is expected


def test_thresholds_reject_inverted_bounds():
    with pytest.raises(ValueError, match="warning <= error"):
        FailingElementsThresholds(warning=10, error=5)
    with pytest.raises(ValueError, match="<= 1"):
        FailingShareThresholds(warning=0.1, error=1.5)


def test_fixed_level():
    assert FixedLevel(AlertLevel.CRITICAL).level(1, 1_000_000) is AlertLevel.CRITICAL
