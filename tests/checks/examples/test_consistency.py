from __future__ import annotations

import datetime as dt

import pytest
import sqlalchemy as sa

from checkers import AlertLevel, Status
from checks.examples import OpsAndLakeDailyTotals, OpsAndLakeFlightsMatch
from checks.examples._demo import DEMO_DATABASE_ENV
from checks.testing import assert_outcome, evaluate_check
from tests.checks.examples.conftest import LAKE_GAPS, NOW

JAN_2 = {"year": 2013, "month": 1, "day": 2}


def flight(id_: int, delay: float | None = 1.0, **day: int) -> dict[str, object]:
    return {
        "id": id_,
        "carrier": "UA",
        "flight": 1,
        "tailnum": "N1",
        "dep_delay": delay,
        "arr_delay": 2.0,
        **(day or JAN_2),
    }


def _ops_database(path, rows) -> str:  # type: ignore[no-untyped-def]
    url = f"sqlite:///{path}"
    engine = sa.create_engine(url)
    with engine.begin() as connection:
        connection.exec_driver_sql(
            "CREATE TABLE flights (id BIGINT, carrier TEXT, flight BIGINT, tailnum TEXT, "
            "dep_delay FLOAT, arr_delay FLOAT, year BIGINT, month BIGINT, day BIGINT)"
        )
        connection.execute(
            sa.text(
                "INSERT INTO flights VALUES (:id, :carrier, :flight, :tailnum, :dep_delay, "
                ":arr_delay, :year, :month, :day)"
            ),
            rows,
        )
    engine.dispose()
    return url


def test_row_level_team_style(spark, tmp_path, monkeypatch: pytest.MonkeyPatch):
    ops = [flight(i) for i in range(10)]
    monkeypatch.setenv(DEMO_DATABASE_ENV, _ops_database(tmp_path / "ops.db", ops))
    lake = [*(flight(i) for i in range(10)), flight(99, **{**JAN_2, "day": 1})]  # other day
    assert_outcome(OpsAndLakeFlightsMatch, rows=lake, status=Status.PASSED, now=NOW)
    changed = [flight(0, delay=None), *(flight(i) for i in range(1, 9))]  # 9 missing, 0 changed
    outcome = assert_outcome(
        OpsAndLakeFlightsMatch, rows=changed, level=AlertLevel.WARNING, now=NOW
    )
    assert outcome.metrics["differing"] == 1 and outcome.metrics["missing_in_right"] == 1
    assert outcome.sample[0]["columns"] == "dep_delay"


def test_row_level_finds_the_lost_flights_of_yesterday(spark, warehouse):
    outcome = evaluate_check(OpsAndLakeFlightsMatch, spark=spark, now=NOW)
    lost = LAKE_GAPS[(1, 2)]
    assert (outcome.failing, outcome.metrics["missing_in_right"]) == (lost, lost)
    assert outcome.metrics["differing"] == 0
    a_day_later = evaluate_check(
        OpsAndLakeFlightsMatch, spark=spark, now=NOW + dt.timedelta(days=1)
    )
    assert a_day_later.status is Status.PASSED  # January 3 is intact


def test_metric_level_finds_the_day_with_the_gap(spark, warehouse):
    outcome = evaluate_check(OpsAndLakeDailyTotals, spark=spark, now=NOW)
    assert (outcome.failing, outcome.total, outcome.level) == (1, 3, AlertLevel.WARNING)
    assert outcome.failing_keys == ((1, 2),)
    day = outcome.sample[0]
    assert day["left"]["flights"] - day["right"]["flights"] == LAKE_GAPS[(1, 2)]


def test_metric_level_team_style(spark):
    ops = [{"month": 1, "day": d, "flights": 2, "departed": 2, "dep_delay": 3.0} for d in (1, 2)]
    lake = [{"month": 1, "day": d, "dep_time": 5.0, "dep_delay": 1.5} for d in (1, 1, 2, 2)]
    assert_outcome(OpsAndLakeDailyTotals, rows={"ops": ops, "lake": lake}, status=Status.PASSED)
    assert_outcome(
        OpsAndLakeDailyTotals, rows={"ops": ops, "lake": lake[:3]}, level=AlertLevel.WARNING
    )
