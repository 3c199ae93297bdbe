from __future__ import annotations

import pytest

from checkers import FailureCounts, KnownBroken, LessThan, NoFailures, ShareAtMost


def counts(failing: int, total: int = 100, unexcused: int | None = None) -> FailureCounts:
    return FailureCounts(failing, total, failing if unexcused is None else unexcused)


def test_less_than_is_strict():
    assert LessThan(3).accepts(counts(2))
    assert not LessThan(3).accepts(counts(3))
    assert not LessThan(0).accepts(counts(1))


def test_share_at_most_uses_unexcused_share():
    assert ShareAtMost(0.05).accepts(counts(5))
    assert not ShareAtMost(0.05).accepts(counts(6))
    assert ShareAtMost(0.05).accepts(counts(9, unexcused=5))


def test_no_failures_accepts_only_fully_excused_failures():
    assert not NoFailures().accepts(counts(1))
    assert NoFailures().accepts(counts(4, unexcused=0))


def test_known_broken_accepts_only_when_every_failure_is_excused():
    known = KnownBroken(["a", "b"], columns="key")
    assert known.columns == ("key",)
    assert known.accepts(counts(7, unexcused=0))
    assert not known.accepts(counts(7, unexcused=1))
    assert known.known_broken() == (known,)


def test_combinations():
    known = KnownBroken(["a"], columns="key")
    either = known | LessThan(3)
    both = LessThan(10) & ShareAtMost(0.05)
    assert either.accepts(counts(50, unexcused=2)) and not either.accepts(counts(50, unexcused=3))
    assert both.accepts(counts(5)) and not both.accepts(counts(6))
    assert either.known_broken() == (known,)
    assert "fewer than 3 failing" in either.describe()


def test_invalid_tolerances_raise():
    with pytest.raises(ValueError):
        LessThan(-1)
    with pytest.raises(ValueError):
        ShareAtMost(1.5)
    with pytest.raises(ValueError, match="one value per key column"):
        KnownBroken([("a", "b", "c")], columns=("x", "y"))
