"""The 15-minute tick under a real Airflow 3.3 scheduler (LocalExecutor, api-server,
dag-processor) in a temporary AIRFLOW_HOME: the DAG replays one scheduled data interval in which
six checks on two sources are due, and the task states tell each check's truth; Spark's event
log counts the applications started and the reads of each source. Beside it, the Airflow example
(examples/airflow/): a producer's asset event runs the quality gate, whose green run writes the
readiness marker and emits the asset a consuming DAG is scheduled on."""

from __future__ import annotations

import datetime as dt
import json

import pytest
import sqlalchemy as sa

from alerting.tables import runs
from tests.dags.airflow_stand import AirflowStand, DagRun
from tests.dags.conftest import TICK_START
from tests.dags.environment import GATE
from tests.dags.spark_events import Application, reads_of

FIRST = dt.datetime.fromisoformat(TICK_START)

# Waits for real Airflow runs that start Spark (the package's stand). `make test-fast` skips it.
pytestmark = pytest.mark.slow

SHOWN = {  # each check that did not pass: one `outcome` instance named by its kind and check
    "✖ CRITICAL · every_quarter_positive": ["failed"],  # no Airflow retry: the data decides
    "✖ FAILED · numbers_odd": ["failed"],  # FAILED at level ERROR
    "✖ could not run · numbers_from_missing_file": ["failed"],  # retried in-process only
    "✖ could not run · numbers_broken_definition": ["failed"],
    "⚠ warning · numbers_below_three": ["success"],  # WARNING
    "≈ tolerated · letters_lowercase": ["success"],
    "✖ manifest out of date": ["failed"],  # the stale manifest (test_operated_tick)
}
PASSED = ["numbers_present", "letters_present", "team_letters_short"]  # no task instance
RECORDED = {
    "every_quarter_positive": "failed",
    "numbers_odd": "failed",
    "numbers_below_three": "failed",
    "numbers_present": "passed",
    "numbers_from_missing_file": "error",
    "numbers_broken_definition": "error",
    "letters_lowercase": "tolerated",
    "letters_present": "passed",
    "team_letters_short": "passed",
    "dq_manifest": "error",  # the stale manifest (test_operated_tick)
}
CHECKS = [*RECORDED, "nightly_small"]


@pytest.fixture(scope="module")
def tick(shared_stand):
    """The package's stand (tests/dags/conftest.py) replays two intervals of the dq DAG; this
    module reads the first, (06:45, 07:00]; the producer DAG was triggered once the DAGs were
    parsed."""
    stand = shared_stand.stand
    run = stand.wait_for_run("dq_checks", lambda r: r.data_interval_start == FIRST, timeout=600)
    return stand, run, shared_stand.events, shared_stand.home


def _tries(stand: AirflowStand, dag_id: str, run_id: str) -> dict[str, list[str | None]]:
    tries: dict[str, list[str | None]] = {}
    for attempt in stand.task_tries(dag_id, run_id):
        tries.setdefault(attempt.task_id, []).append(attempt.state)
    return tries


def test_task_states_tell_each_checks_truth(tick):
    stand, run, _, _ = tick
    assert run.state == "success"  # red checks fail their own instances, not the tick
    assert run.data_interval_end.isoformat() == "2026-11-22T07:00:00+00:00"
    assert stand.shown("dq_checks", run.run_id) == SHOWN, stand.log_tails()
    # task instances per tick: evaluate, tick and one per check that did not pass, however many
    # checks the manifest holds (six outcome tasks per check made 6 x 14 + 3 here before)
    instances = stand.task_instances("dq_checks", run.run_id)
    assert sorted({t for t, _ in instances}) == ["evaluate", "outcome", "tick"]
    assert len(instances) == 2 + len(SHOWN)
    tries = _tries(stand, "dq_checks", run.run_id)
    assert (tries["evaluate"], tries["tick"]) == (["success"], ["success"])
    engine = sa.create_engine(stand.env["DQ_DATABASE_URL"])
    with engine.connect() as connection:
        query = sa.select(runs.c.check_name, runs.c.status).where(
            runs.c.check_name.in_(CHECKS), runs.c.window_end == run.data_interval_end
        )
        recorded = connection.execute(query).all()
    assert sorted(recorded) == sorted(RECORDED.items())  # each due check recorded once
    summaries = stand.xcom("dq_checks", run.run_id, "evaluate", key="outcomes")
    assert [summaries[name]["status"] for name in PASSED] == ["passed"] * 3
    assert "nightly_small" not in summaries  # not due at 07:00
    warning = summaries["numbers_below_three"]
    assert warning["status"] == "failed" and warning["level"] == "WARNING"
    critical = stand.map_index("dq_checks", run.run_id, "✖ CRITICAL · every_quarter_positive")
    log = stand.task_log("dq_checks", run.run_id, "outcome", map_index=critical)
    assert "every_quarter_positive: FAILED (level CRITICAL), 1/3 failing" in log


def _started_during(application: Application, run: DagRun) -> bool:
    """A local driver's application id ends with its start time in milliseconds."""
    assert run.start_date is not None and run.end_date is not None
    started = dt.datetime.fromtimestamp(int(application.app_id.rsplit("-", 1)[1]) / 1000, dt.UTC)
    return run.start_date <= started <= run.end_date


def test_one_spark_application_reads_each_source_once(tick):
    _, run, events, home = tick
    numbers, letters = home / "numbers.csv", home / "letters.csv"
    tick_apps = [
        a
        for a in events.applications()
        if _started_during(a, run) and (reads_of(a.reads, numbers) or reads_of(a.reads, letters))
    ]  # (the example's gate DAG may run its own tick meanwhile, on other data)
    assert len(tick_apps) == 1  # the tick's evaluate task: one driver, the ERROR retries in it
    reads = tick_apps[0].reads
    # one read each: the broken check's ERROR is its definition's, so no retry reads it again
    assert (reads_of(reads, numbers), reads_of(reads, letters)) == (1, 1), reads


def test_only_a_green_run_marks_its_dataset_ready_and_emits_its_asset(tick):
    stand, run, _, home = tick
    marker = json.loads((home / "_letters.csv_SUCCESS").read_text())
    assert marker["check"] == "letters_present" and marker["status"] == "passed"
    assert not (home / "_numbers.csv_SUCCESS").exists()
    events = stand.asset_events(name="fixture/letters")
    [event] = [e for e in events if e.source_run_id == run.run_id]  # one per green tick
    assert (event.source_dag_id, event.source_task_id) == ("dq_checks", "evaluate")
    assert event.extra["check"] == "letters_present"
    assert stand.asset_events(name="fixture/numbers") == []


def test_upstream_data_runs_the_gate_and_its_green_run_runs_the_consumer(tick):
    stand, _, _, home = tick
    gate = stand.wait_for_run(GATE, timeout=600)
    assert gate.run_type == "asset_triggered" and gate.state == "success"
    tries = _tries(stand, GATE, gate.run_id)
    assert tries == {"evaluate": ["success"], "outcome": ["failed"], "tick": ["success"]}
    # its one outcome instance: the stale manifest's (the check passed: no instance of its own)
    assert stand.shown(GATE, gate.run_id) == {"✖ manifest out of date": ["failed"]}
    summaries = stand.xcom(GATE, gate.run_id, "evaluate", key="outcomes")
    assert summaries["landed_flights_have_destinations"]["status"] == "passed"
    events = stand.asset_events(name="lake/flights")
    [event] = [e for e in events if e.source_run_id == gate.run_id]
    assert event.source_task_id == "evaluate"  # through the alias, only after a green run
    assert (home / "lake" / "flights" / "_SUCCESS").exists()
    consumer = stand.wait_for_run("flights_consumer", timeout=300)
    assert consumer.run_type == "asset_triggered" and consumer.state == "success"
    report = stand.xcom("flights_consumer", consumer.run_id, "routing_report")
    assert report["flights"] == 20
