"""The 15-minute tick under a real Airflow 3.3 scheduler (LocalExecutor, api-server,
dag-processor) in a temporary AIRFLOW_HOME: the DAG replays one scheduled data interval in which
six checks on two sources are due, and the task states tell each check's truth; Spark's event
log counts the applications started and the reads of each source. Beside it, the Airflow example
(examples/airflow/): a producer's asset event runs the quality gate, whose green run writes the
readiness marker and emits the asset a consuming DAG is scheduled on."""

from __future__ import annotations

import json

import pytest
import sqlalchemy as sa

from alerting.tables import runs
from tests.dags.airflow_stand import AirflowStand
from tests.dags.environment import GATE
from tests.dags.spark_events import reads_of

# Waits for real Airflow runs that start Spark (the package's stand). `make test-fast` skips it.
pytestmark = pytest.mark.slow

DUE_STATES = {
    "every_quarter_positive.result": ["failed"],  # CRITICAL: no retry
    "numbers_from_missing_file.result": ["failed", "failed"],  # ERROR: retried, then failed
    "numbers_below_three.ok": ["success"],  # WARNING
    "numbers_present.ok": ["success"],
    "letters_lowercase.ok": ["success"],  # TOLERATED
    "letters_present.ok": ["success"],
}
RECORDED = {
    "every_quarter_positive": "failed",
    "numbers_below_three": "failed",
    "numbers_present": "passed",
    "numbers_from_missing_file": "error",
    "letters_lowercase": "tolerated",
    "letters_present": "passed",
}
CHECKS = [*RECORDED, "nightly_small"]


@pytest.fixture(scope="module")
def tick(shared_stand):
    """The package's stand (tests/dags/conftest.py) replays one interval, (06:45, 07:00], of the
    dq DAG; the producer DAG was triggered once the DAGs were parsed."""
    stand = shared_stand.stand
    run = stand.wait_for_run("dq_checks", lambda r: r.run_type == "scheduled", timeout=600)
    return stand, run, shared_stand.events, shared_stand.home


def _tries(stand: AirflowStand, dag_id: str, run_id: str) -> dict[str, list[str | None]]:
    tries: dict[str, list[str | None]] = {}
    for attempt in stand.task_tries(dag_id, run_id):
        tries.setdefault(attempt.task_id, []).append(attempt.state)
    return tries


def test_task_states_tell_each_checks_truth(tick):
    stand, run, _, _ = tick
    assert run.state == "failed"  # a failing check fails the tick
    assert run.data_interval_end.isoformat() == "2026-11-22T07:00:00+00:00"
    tries = _tries(stand, "dq_checks", run.run_id)
    assert {t: tries[t] for t in DUE_STATES} == DUE_STATES, stand.log_tails()
    for name in ("every_quarter_positive", "numbers_from_missing_file"):
        assert tries[f"{name}.ok"] == ["skipped"]
    for name in ("numbers_below_three", "numbers_present", "letters_lowercase", "letters_present"):
        assert tries[f"{name}.result"] == ["skipped"]  # green: no task process at all
    for name in ("nightly_small", "landed_flights_have_destinations"):  # not due at 07:00
        assert (tries[f"{name}.ok"], tries[f"{name}.result"]) == (["skipped"], ["skipped"])
    assert tries["evaluate"] == ["success"]
    engine = sa.create_engine(stand.env["DQ_DATABASE_URL"])
    with engine.connect() as connection:
        query = sa.select(runs.c.check_name, runs.c.status).where(runs.c.check_name.in_(CHECKS))
        recorded = connection.execute(query).all()
    # each due check recorded once, the ERROR's retry evaluated it again
    assert sorted(recorded) == sorted([*RECORDED.items(), ("numbers_from_missing_file", "error")])
    summaries = stand.xcom("dq_checks", run.run_id, "evaluate", key="outcomes")
    warning = summaries["numbers_below_three"]
    assert warning["status"] == "failed" and warning["level"] == "WARNING"
    log = stand.task_log("dq_checks", run.run_id, "every_quarter_positive.result")
    assert "every_quarter_positive: FAILED (level CRITICAL), 1/3 failing" in log


def test_one_spark_application_reads_each_source_once(tick):
    _, _, events, home = tick
    sources = [home / "numbers.csv", home / "letters.csv"]
    readers = [a for a in events.applications() if any(reads_of(a.reads, s) for s in sources)]
    assert len(readers) == 1  # the tick's evaluate task: one driver for all due checks
    assert [reads_of(readers[0].reads, s) for s in sources] == [1, 1]


def test_only_a_green_run_marks_its_dataset_ready_and_emits_its_asset(tick):
    stand, run, _, home = tick
    tries = _tries(stand, "dq_checks", run.run_id)
    assert tries["letters_present.ready"] == ["success"]
    assert tries["every_quarter_positive.ready"] == ["upstream_failed"]
    marker = json.loads((home / "_letters.csv_SUCCESS").read_text())
    assert marker["check"] == "letters_present" and marker["status"] == "passed"
    assert not (home / "_numbers.csv_SUCCESS").exists()
    [event] = stand.asset_events(name="fixture/letters")
    assert event.source_dag_id == "dq_checks" and event.extra["run_id"] == marker["run_id"]
    assert stand.asset_events(name="fixture/numbers") == []


def test_upstream_data_runs_the_gate_and_its_green_run_runs_the_consumer(tick):
    stand, _, _, home = tick
    gate = stand.wait_for_run(GATE, timeout=600)
    assert gate.run_type == "asset_triggered" and gate.state == "success"
    tries = _tries(stand, GATE, gate.run_id)
    assert tries["landed_flights_have_destinations.ok"] == ["success"]
    assert tries["landed_flights_have_destinations.ready"] == ["success"]
    assert (home / "lake" / "flights" / "_SUCCESS").exists()
    consumer = stand.wait_for_run("flights_consumer", timeout=300)
    assert consumer.run_type == "asset_triggered" and consumer.state == "success"
    report = stand.xcom("flights_consumer", consumer.run_id, "routing_report")
    assert report["flights"] == 20
