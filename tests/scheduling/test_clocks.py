from __future__ import annotations

import datetime as dt

import pytest

from scheduling.clocks import Cron, Every

UTC = dt.UTC


def at(hour: int, minute: int = 0, day: int = 22) -> dt.datetime:
    return dt.datetime(2026, 11, day, hour, minute, tzinfo=UTC)


def test_cron_window_is_half_open():
    hourly = Cron("0 * * * *")
    assert hourly.fires_between(at(6, 45), at(7, 0))  # end included
    assert not hourly.fires_between(at(7, 0), at(7, 15))  # start excluded
    assert not hourly.fires_between(at(7, 15), at(7, 30))


def test_cron_follows_its_time_zone_across_dst():
    paris = Cron("0 6 * * *", tz="Europe/Paris")
    # winter: 06:00 Paris is 05:00 UTC; summer: 04:00 UTC
    assert paris.fires_between(at(4, 45), at(5, 0))
    summer = dt.datetime(2026, 7, 1, 3, 45, tzinfo=UTC)
    assert paris.fires_between(summer, summer + dt.timedelta(minutes=15))
    # 02:30 does not exist on 2026-03-29 in Paris: croniter moves the fire into 03:00 local
    gap = Cron("30 2 * * *", tz="Europe/Paris")
    start = dt.datetime(2026, 3, 29, 0, 45, tzinfo=UTC)
    assert gap.next_fire(start) == dt.datetime(2026, 3, 29, 1, 0, tzinfo=UTC)


def test_invalid_cron_and_zone_fail_at_definition():
    with pytest.raises(ValueError, match="invalid cron expression"):
        Cron("61 * * * *")
    with pytest.raises(ValueError, match="unknown time zone"):
        Cron("0 * * * *", tz="Mars/Olympus")


def test_every_counts_from_its_anchor():
    quarter = Every(dt.timedelta(minutes=15))
    assert quarter.fires_between(at(7, 0), at(7, 15))
    assert not quarter.fires_between(at(7, 1), at(7, 14))
    daily_at_six = Every(dt.timedelta(days=1), anchor=at(6))
    assert daily_at_six.fires_between(at(5, 50, day=25), at(6, 5, day=25))
    with pytest.raises(ValueError):
        Every(dt.timedelta(0))


def test_naive_datetimes_are_refused():
    with pytest.raises(ValueError, match="aware"):
        Cron("0 * * * *").fires_between(dt.datetime(2026, 1, 1), dt.datetime(2026, 1, 2))


from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

EXPRESSIONS = [
    "*/15 * * * *",
    "0 * * * *",
    "30 2 * * *",
    "5 6 * * 1-5",
    "0 0 1 * *",
    "*/7 3-5 * * *",
    "0 12 13 * 5",
    "45 23 * 2 *",
]


@settings(max_examples=300, deadline=None)
@given(
    expression=st.sampled_from(EXPRESSIONS),
    tz=st.sampled_from(["UTC", "Europe/Paris", "America/New_York"]),
    start=st.datetimes(
        min_value=dt.datetime(2026, 1, 1),
        max_value=dt.datetime(2026, 12, 31),
        timezones=st.just(dt.UTC),
    ),
    minutes=st.sampled_from([1, 15, 60, 119]),
)
def test_the_fast_window_match_agrees_with_croniter(expression, tz, start, minutes):
    clock = Cron(expression, tz=tz)
    end = start + dt.timedelta(minutes=minutes)
    assert clock.fires_between(start, end) == (clock.next_fire(start) <= end)


@settings(max_examples=300, deadline=None)
@given(
    expression=st.sampled_from(EXPRESSIONS),
    tz=st.sampled_from(["Europe/Paris", "America/New_York"]),
    day=st.sampled_from(
        [dt.date(2026, 3, 29), dt.date(2026, 10, 25), dt.date(2026, 3, 8), dt.date(2026, 11, 1)]
    ),
    offset=st.integers(0, 48 * 60),
    minutes=st.sampled_from([1, 15, 60]),
)
def test_the_fast_window_match_agrees_with_croniter_around_dst(
    expression, tz, day, offset, minutes
):
    clock = Cron(expression, tz=tz)
    start = dt.datetime.combine(day, dt.time(), dt.UTC) + dt.timedelta(minutes=offset - 24 * 60)
    end = start + dt.timedelta(minutes=minutes)
    assert clock.fires_between(start, end) == (clock.next_fire(start) <= end)
