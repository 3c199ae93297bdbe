from __future__ import annotations

from checkers import AlertLevel, Status
from checks.examples import PlaneLegsDoNotOverlap
from checks.testing import assert_outcome, evaluate_check
from tests.checks.examples.conftest import NOW


def leg(id_: int, tail: str, sched: int, delay: float, air: float) -> dict[str, object]:
    return {
        "id": id_,
        "year": 2013,
        "month": 1,
        "day": 1,
        "tailnum": tail,
        "sched_dep_time": sched,
        "dep_delay": delay,
        "air_time": air,
    }


def test_overlapping_legs_of_one_plane(spark):
    # N1: 06:00 +0 for 120 min lands 08:00; next leaves 07:30 + 0: overlap.
    overlapping = [leg(1, "N1", 600, 0, 120), leg(2, "N1", 730, 0, 60), leg(3, "N2", 730, 0, 60)]
    outcome = assert_outcome(PlaneLegsDoNotOverlap, rows=overlapping, status=Status.TOLERATED)
    assert (outcome.failing, outcome.total) == (1, 1)
    delayed_ok = [leg(1, "N1", 600, 0, 120), leg(2, "N1", 730, 45, 60)]
    assert_outcome(PlaneLegsDoNotOverlap, rows=delayed_ok, status=Status.PASSED)
    many = [leg(i, f"N{i}", 600, 0, 120) for i in range(60)]
    many += [leg(100 + i, f"N{i}", 700, 0, 60) for i in range(60)]
    assert_outcome(PlaneLegsDoNotOverlap, rows=many, level=AlertLevel.ERROR)


def test_runs_on_the_lake(spark, warehouse):
    outcome = evaluate_check(PlaneLegsDoNotOverlap, spark=spark, now=NOW)
    assert outcome.status is not Status.ERROR and outcome.total > 1000
