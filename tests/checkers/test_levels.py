from __future__ import annotations

import pytest

from checkers import AlertLevel, FailingElementsThresholds, FailingShareThresholds, FixedLevel
from checkers.levels import level_reason


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


def test_each_level_says_which_threshold_set_it():
    shares = FailingShareThresholds(warning=0.01, error=0.05)
    assert level_reason(shares, 10, 1000) == (
        "WARNING: 1% failing (10 of 1,000) <= warning threshold 1%"
    )
    assert level_reason(shares, 12, 1000) == (
        "ERROR: 1.2% failing (12 of 1,000) > warning threshold 1%, <= error threshold 5%"
    )
    assert level_reason(shares, 51, 1000).startswith("CRITICAL: 5.1% failing (51 of 1,000) > ")
    counts = FailingElementsThresholds(warning=10, error=100)
    assert level_reason(counts, 1_200, 5_000) == ("CRITICAL: 1,200 failing > error threshold 100")
    assert level_reason(FixedLevel(AlertLevel.WARNING), 3, 9) == (
        "WARNING: FixedLevel, any unaccepted failure (3 failing)"
    )

    class Custom:  # an AlertLevelPolicy of a team's own, without explain()
        def level(self, failing: int, total: int) -> AlertLevel:
            return AlertLevel.ERROR

    assert level_reason(Custom(), 4, 9) == "ERROR: 4 failing, as Custom.level answered"
