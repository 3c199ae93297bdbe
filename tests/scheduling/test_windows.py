"""Due windows: boundaries, DST, 15-minute vs hourly vs daily clocks, catch-up after downtime."""

from __future__ import annotations

import datetime as dt

import pytest

from scheduling.clocks import Cron
from scheduling.schema import project_database
from scheduling.windows import due_windows, last_window_ends, remember_window_ends

UTC = dt.UTC
CLOCKS = [
    ("quarter", Cron("*/15 * * * *")),
    ("hourly", Cron("0 * * * *")),
    ("daily", Cron("0 6 * * *")),
]


def ticks(start: dt.datetime, count: int) -> list[dt.datetime]:
    return [start + dt.timedelta(minutes=15 * i) for i in range(1, count + 1)]


def simulate(
    clocks, start: dt.datetime, moments: list[dt.datetime]
) -> dict[str, list[dt.datetime]]:
    """Run the scheduler at each moment; which checks ran when."""
    last = {name: start for name, _ in clocks}
    ran: dict[str, list[dt.datetime]] = {name: [] for name, _ in clocks}
    for now in moments:
        for window in due_windows(clocks, now, last):
            ran[window.check].append(now)
        last = {name: now for name, _ in clocks}
    return ran


def test_a_day_of_ticks_runs_each_clock_as_often_as_it_fires():
    start = dt.datetime(2026, 11, 22, 0, 0, tzinfo=UTC)
    ran = simulate(CLOCKS, start, ticks(start, 96))
    assert (len(ran["quarter"]), len(ran["hourly"]), len(ran["daily"])) == (96, 24, 1)
    assert ran["daily"] == [dt.datetime(2026, 11, 22, 6, 0, tzinfo=UTC)]


def test_a_fire_at_a_window_end_counts_once_in_that_window():
    at_six = dt.datetime(2026, 11, 22, 6, 0, tzinfo=UTC)
    clocks = [("daily", Cron("0 6 * * *"))]
    assert due_windows(clocks, at_six, {"daily": at_six - dt.timedelta(minutes=15)})
    assert not due_windows(clocks, at_six + dt.timedelta(minutes=15), {"daily": at_six})


def test_catch_up_after_downtime_runs_once():
    start = dt.datetime(2026, 11, 22, 0, 0, tzinfo=UTC)
    back = dt.datetime(2026, 11, 22, 9, 10, tzinfo=UTC)  # down from 00:00 to 09:10
    ran = simulate(CLOCKS, start, [back])
    assert {name: len(times) for name, times in ran.items()} == {
        "quarter": 1,
        "hourly": 1,
        "daily": 1,
    }


def test_dst_transition_in_the_checks_time_zone():
    paris = [("paris", Cron("30 2 * * *", tz="Europe/Paris"))]
    start = dt.datetime(2026, 3, 28, 23, 0, tzinfo=UTC)
    ran = simulate(paris, start, ticks(start, 4 * 24))
    # 02:30 does not exist on March 29 in Paris: the check runs once, at 03:00 local (01:00 UTC)
    assert ran["paris"] == [dt.datetime(2026, 3, 29, 1, 0, tzinfo=UTC)]
    autumn = dt.datetime(2026, 10, 24, 22, 0, tzinfo=UTC)
    ran = simulate(paris, autumn, ticks(autumn, 4 * 24))
    assert len(ran["paris"]) == 1  # 02:30 happens twice on October 25: still one run


def test_first_sighting_looks_back_one_tick_and_windows_are_remembered(tmp_path):
    engine = project_database(f"sqlite:///{tmp_path / 'dq.db'}")
    now = dt.datetime(2026, 11, 22, 6, 5, tzinfo=UTC)
    assert [w.check for w in due_windows(CLOCKS, now, last_window_ends(engine))] == [
        "quarter",
        "hourly",
        "daily",
    ]
    remember_window_ends(engine, ["quarter", "daily"], now)
    remember_window_ends(engine, ["daily"], now + dt.timedelta(minutes=15))
    assert last_window_ends(engine) == {"quarter": now, "daily": now + dt.timedelta(minutes=15)}


@pytest.mark.parametrize("clock", [None, object()])
def test_checks_without_a_clock_are_never_due(clock):
    now = dt.datetime(2026, 11, 22, 6, 0, tzinfo=UTC)
    assert due_windows([("manual", clock)], now, {}) == []
