"""The Airflow example (examples/airflow/): its check gates the producer's data through the real
run path and `dq ready`, and its DAGs parse without Spark or the checks, naming the assets the
check declares."""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import sys
from pathlib import Path

from checkers import Status
from scheduling.cli import main
from scheduling.cli.exits import EXIT_FAILED, EXIT_OK
from scheduling.runner import run_checks
from scheduling.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
NOW = dt.datetime(2026, 11, 22, 7, 0, tzinfo=dt.UTC)


def test_the_example_check_gates_the_landed_flights(spark, tmp_path, monkeypatch, capsys):
    from examples.airflow.flight_checks import LandedFlightsHaveDestinations as Gate
    from examples.airflow.lake import land_flights

    for name, value in {
        "DQ_EXAMPLE_LAKE": tmp_path / "lake",
        "DQ_DATABASE_URL": f"sqlite:///{tmp_path / 'dq.db'}",
        "DQ_STATE_DIR": tmp_path / "state",
        "DQ_CONFIG": tmp_path / "none.toml",
    }.items():
        monkeypatch.setenv(name, str(value))
    settings = Settings.from_environment()
    marker = land_flights(0) / "_SUCCESS"
    [ready] = run_checks([Gate], now=NOW, settings=settings, spark=spark).readiness
    assert ready.ready and json.loads(marker.read_text())["total"] == 20
    assert main(["ready", "lake/flights", "--at", NOW.isoformat()]) == EXIT_OK

    land_flights(3)  # new data: the producer took the marker back
    assert main(["ready", "lake/flights"]) == EXIT_FAILED
    report = run_checks([Gate], now=NOW + dt.timedelta(hours=1), settings=settings, spark=spark)
    assert report.outcomes[0].status is Status.FAILED and not marker.exists()
    assert main(["ready", "lake/flights"]) == EXIT_FAILED
    assert capsys.readouterr().out.splitlines()[-1] == "lake/flights: not ready"


def test_the_example_dags_parse_cheaply_and_name_the_checks_assets(tmp_path):
    from examples.airflow.flight_checks import LandedFlightsHaveDestinations as Gate

    env = {
        **os.environ,
        "AIRFLOW_HOME": str(tmp_path),
        "AIRFLOW__CORE__DAGS_FOLDER": str(ROOT / "examples" / "airflow" / "dags"),
        "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
        "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": f"sqlite:///{tmp_path / 'airflow.db'}",
        "PYTHONPATH": str(ROOT),
        "DQ_EXAMPLE_LAKE": str(tmp_path / "lake"),
    }
    code = """
import json, sys
from airflow.dag_processing.dagbag import DagBag
bag = DagBag()
producer, consumer = bag.dags["flights_producer"], bag.dags["flights_consumer"]
print(json.dumps({
    "errors": {str(k): v for k, v in bag.import_errors.items()},
    "outlets": [a.name for t in producer.tasks for a in t.outlets],
    "schedule": [consumer.timetable.asset_condition.name, consumer.timetable.asset_condition.uri],
    "heavy": [m for m in ("pyspark", "checks") if m in sys.modules],
}))
"""
    run = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    parsed = json.loads(run.stdout.strip().splitlines()[-1])
    assert parsed["errors"] == {} and parsed["heavy"] == []
    assert parsed["outlets"] == list(Gate.after)  # the producer's event triggers the check
    guarded = Gate.guards.airflow_asset(Gate.name)  # type: ignore[union-attr]
    assert parsed["schedule"] == [guarded["name"], guarded["uri"]]
