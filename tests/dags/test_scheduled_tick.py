"""The 15-minute tick under a real Airflow 3.3 scheduler (LocalExecutor, api-server,
dag-processor) in a temporary AIRFLOW_HOME: the DAG replays one scheduled data interval in which
six checks on two sources are due, and the task states tell each check's truth. Spark's event
log counts the applications started and the reads of each source."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.dags.airflow_stand import AirflowStand
from tests.dags.environment import ROOT, dag_environment
from tests.dags.spark_events import EventLogs, reads_of

START = "2026-11-22T06:45:00+00:00"  # the one interval replayed: (06:45, 07:00]
DUE_STATES = {
    "every_quarter_positive.result": ["failed"],  # CRITICAL: no retry
    "numbers_from_missing_file.result": ["failed", "failed"],  # ERROR: retried, then failed
    "numbers_below_three.result": ["success"],  # WARNING
    "numbers_present.result": ["success"],
    "letters_lowercase.result": ["success"],  # TOLERATED
    "letters_present.result": ["success"],
}


@pytest.fixture(scope="module")
def tick(tmp_path_factory):
    home = tmp_path_factory.mktemp("tick")
    dags = home / "dags"
    dags.mkdir()
    (dags / "dq_checks.py").symlink_to(ROOT / "dags" / "dq_checks.py")
    events = EventLogs.create(home / "spark")
    env = {
        k: v
        for k, v in dag_environment(home).items()
        if not k.startswith("AIRFLOW") and os.environ.get(k) != v
    }
    env.update(events.env())
    env.update(DQ_DAG_START=START, DQ_DAG_END=START, DQ_DAG_CATCHUP="1")
    with AirflowStand(dags, home / "airflow", env=env) as stand:
        stand.wait_for_dags("dq_checks")
        run = stand.wait_for_run("dq_checks", lambda r: r.run_type == "scheduled", timeout=600)
        yield stand, run, events, home


def test_task_states_tell_each_checks_truth(tick):
    stand, run, _, _ = tick
    assert run.state == "failed"  # a failing check fails the tick
    assert run.data_interval_end.isoformat() == "2026-11-22T07:00:00+00:00"
    tries: dict[str, list[str]] = {}
    for attempt in stand.task_tries("dq_checks", run.run_id):
        tries.setdefault(attempt.task_id, []).append(attempt.state)
    assert {t: tries[t] for t in DUE_STATES} == DUE_STATES, stand.log_tails()
    assert tries["nightly_small.result"] == ["skipped"]  # not due at 07:00
    assert tries["evaluate"] == ["success"]
    summary = stand.xcom("dq_checks", run.run_id, "numbers_below_three.result")
    assert summary["status"] == "failed" and summary["level"] == "WARNING"
    log = stand.task_log("dq_checks", run.run_id, "every_quarter_positive.result")
    assert "every_quarter_positive: CRITICAL, 1/3 failing" in log


def test_one_spark_application_reads_each_source_once(tick):
    _, _, events, home = tick
    applications = events.applications()
    tick_app, *retries = applications
    assert reads_of(tick_app.reads, home / "numbers.csv") == 1
    assert reads_of(tick_app.reads, home / "letters.csv") == 1
    # the ERROR check's retry is a later attempt of that check alone
    assert len(retries) == 1 and not any(r.reads for r in retries)
