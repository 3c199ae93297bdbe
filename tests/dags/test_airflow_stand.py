"""The Airflow stand works: one real scheduler, dag-processor and API server run a scheduled data
interval of a trivial DAG (no Spark), and the stand reads back task states with their tries,
mapped instances, XComs, asset events and task logs.

Replay semantics (Airflow 3.3.2, `CronDataIntervalTimetable`, verified by `stand_bounds` of
probe_dags.py; source: airflow/timetables/interval.py `next_dagrun_info`,
serialization/definitions/dag.py `_time_restriction`): with `catchup=True` the first interval
starts at the first cron fire at or after `start_date`, and an interval is scheduled when its
**start** is at or before `end_date` (its end may lie past `end_date`). A run is created once its
interval has ended. So `DQ_DAG_START=S, DQ_DAG_END=E` replays the intervals starting in [S, E]: the
one 15-minute interval ending at midnight is `S = 23:45`, `23:45 <= E < 00:00`; `E = 00:00` adds
the interval [00:00, 00:15). With `catchup=False` only the latest complete interval runs, none when
`end_date` lies before it.
"""

from __future__ import annotations

import datetime as dt

import pytest

from tests.dags.probe_dags import MIDNIGHT, START

# Boots the session's Airflow stand and waits for scheduled runs. `make test-fast` skips it.
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def stand(shared_stand):
    """The package's stand (tests/dags/conftest.py), which also hosts the dq DAG."""
    return shared_stand.stand


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
