"""The Airflow stand works: one real scheduler, dag-processor and API server run a scheduled data
interval of a trivial DAG (no Spark), and the stand reads back task states with their tries,
mapped instances, XComs, asset events and task logs.

Replay semantics (Airflow 3.3.2, `CronDataIntervalTimetable`, verified by `stand_bounds` below;
source: airflow/timetables/interval.py `next_dagrun_info`, serialization/definitions/dag.py
`_time_restriction`): with `catchup=True` the first interval starts at the first cron fire at or
after `start_date`, and an interval is scheduled when its **start** is at or before `end_date`
(its end may lie past `end_date`). A run is created once its interval has ended. So
`DQ_DAG_START=S, DQ_DAG_END=E` replays the intervals starting in [S, E]: the one 15-minute
interval ending at midnight is `S = 23:45`, `23:45 <= E < 00:00`; `E = 00:00` adds the interval
[00:00, 00:15). With `catchup=False` only the latest complete interval runs, none when `end_date`
lies before it.
"""

from __future__ import annotations

import datetime as dt
import textwrap
from pathlib import Path

import pytest

from tests.dags.airflow_stand import AirflowStand

PROBE = """
import datetime as dt
import os

from airflow.sdk import Asset, CronDataIntervalTimetable, dag, get_current_context, task
from airflow.sdk.exceptions import AirflowFailException, AirflowSkipException

PASSED = Asset(name="probe_passed", uri="file:///tmp/stand-probe/passed")
SCHEDULE = CronDataIntervalTimetable("*/15 * * * *", timezone="UTC")


def _env_time(name):
    return dt.datetime.fromisoformat(os.environ[name])


@dag(
    dag_id="stand_probe",
    schedule=SCHEDULE,
    start_date=_env_time("DQ_DAG_START"),
    end_date=_env_time("DQ_DAG_END"),
    catchup=os.environ["DQ_DAG_CATCHUP"].lower() in ("1", "true"),
    default_args={"retries": 3, "retry_delay": dt.timedelta(seconds=1)},
)
def stand_probe():
    @task(outlets=[PASSED])
    def passes(*, outlet_events):
        context = get_current_context()
        window = [context[k].isoformat() for k in ("data_interval_start", "data_interval_end")]
        print("probe window", window)
        outlet_events[PASSED].extra = {"window_end": window[1]}
        return window

    @task
    def critical():
        raise AirflowFailException("critical outcome")  # no retry, whatever `retries` says

    @task(retries=1)
    def error():
        raise ValueError("could not evaluate")

    @task
    def not_due():
        raise AirflowSkipException("not due")

    @task
    def square(x):
        return x * x

    passes()
    critical()
    error()
    not_due()
    square.expand(x=[2, 3])


@dag(
    dag_id="stand_bounds",
    schedule=SCHEDULE,
    start_date=_env_time("DQ_DAG_START"),
    end_date=_env_time("DQ_DAG_START") + dt.timedelta(minutes=15),
    catchup=True,
)
def stand_bounds():
    @task
    def noop():
        pass

    noop()


stand_probe()
stand_bounds()
"""
START = dt.datetime(2026, 1, 1, 23, 45, tzinfo=dt.UTC)
MIDNIGHT = dt.datetime(2026, 1, 2, tzinfo=dt.UTC)


@pytest.fixture(scope="module")
def stand(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("stand")
    dags = root / "dags"
    dags.mkdir()
    (dags / "probe.py").write_text(textwrap.dedent(PROBE))
    env = {
        "DQ_DAG_START": START.isoformat(),
        "DQ_DAG_END": "2026-01-01T23:59:00+00:00",
        "DQ_DAG_CATCHUP": "true",
        "PYTHONPATH": str(Path(__file__).resolve().parents[2]),
    }
    with AirflowStand(dags, root / "home", env=env) as running:
        running.wait_for_dags("stand_probe", "stand_bounds")
        yield running


def test_a_scheduled_interval_ends_in_honest_task_states(stand):
    run = stand.wait_for_run("stand_probe")
    assert [r.run_id for r in stand.dag_runs("stand_probe")] == [run.run_id]  # one interval
    assert (run.run_type, run.state) == ("scheduled", "failed")
    assert (run.data_interval_start, run.data_interval_end) == (START, MIDNIGHT)

    states = {
        key: (ti.state, ti.try_number, ti.max_tries)
        for key, ti in stand.task_instances("stand_probe", run.run_id).items()
    }
    assert states == {
        ("passes", -1): ("success", 1, 3),
        ("critical", -1): ("failed", 1, 3),  # AirflowFailException: no retry
        ("error", -1): ("failed", 2, 1),  # ValueError: retried once, then failed
        ("not_due", -1): ("skipped", 1, 3),
        ("square", 0): ("success", 1, 3),
        ("square", 1): ("success", 1, 3),
    }
    error_tries = [
        (t.try_number, t.state)
        for t in stand.task_tries("stand_probe", run.run_id)
        if t.task_id == "error"
    ]
    assert error_tries == [(1, "failed"), (2, "failed")]  # history keeps each try's end


def test_xcoms_assets_and_logs_are_read_back(stand):
    run = stand.wait_for_run("stand_probe")
    window = [START.isoformat(), MIDNIGHT.isoformat()]
    assert stand.xcom("stand_probe", run.run_id, "passes") == window
    assert stand.xcom("stand_probe", run.run_id, "square", map_index=1) == 9
    with pytest.raises(KeyError):
        stand.xcom("stand_probe", run.run_id, "critical")

    (event,) = stand.asset_events(name="probe_passed")
    assert (event.source_dag_id, event.source_task_id, event.source_run_id) == (
        "stand_probe",
        "passes",
        run.run_id,
    )
    assert event.extra == {"window_end": MIDNIGHT.isoformat()}

    assert f"probe window {window}" in stand.task_log("stand_probe", run.run_id, "passes")
    assert "could not evaluate" in stand.task_log("stand_probe", run.run_id, "error", try_number=2)
    assert stand.task_log_path("stand_probe", run.run_id, "square", map_index=0).exists()


def test_end_date_bounds_the_start_of_the_last_interval(stand):
    for start in (START, MIDNIGHT):
        stand.wait_for_run("stand_bounds", lambda r, s=start: r.data_interval_start == s)
    intervals = sorted(
        (r.data_interval_start, r.data_interval_end) for r in stand.dag_runs("stand_bounds")
    )
    assert intervals == [(START, MIDNIGHT), (MIDNIGHT, MIDNIGHT + dt.timedelta(minutes=15))]
