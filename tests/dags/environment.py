"""The environment of the DAG tests: a temporary AIRFLOW_HOME running dags/ over the fixture
checks (tests/dags/fixture_checks.py), their CSV files, manifest and project database."""

from __future__ import annotations

import os
from pathlib import Path

from scheduling.airflow.manifest import build_manifest, render
from tests.dags import fixture_checks

ROOT = Path(__file__).resolve().parents[2]
#: The Airflow example's quality gate: the DAG running the checks `after` producer/flights.
GATE = "dq_checks_after_name_producer_flights"
FIXTURES = [
    value
    for value in vars(fixture_checks).values()
    if isinstance(value, type) and value.__module__ == fixture_checks.__name__
]


def dag_environment(home: Path, *, example: bool = False) -> dict[str, str]:
    """DQ_* (and a few AIRFLOW_*) variables for the fixture checks under `home`; `example` adds
    the Airflow example's quality gate (examples/airflow/) and its lake under `home`."""
    packages = [fixture_checks.__name__]
    checks = list(FIXTURES)
    if example:
        from examples.airflow import flight_checks

        packages.append(flight_checks.__name__)
        checks.append(flight_checks.LandedFlightsHaveDestinations)
    manifest = home / "manifest.json"
    manifest.write_text(render(build_manifest(checks, packages=packages)))
    (home / "numbers.csv").write_text("n\n1\n-2\n3\n")
    (home / "letters.csv").write_text("c\na\nB\nc\n")
    return {
        **os.environ,
        "AIRFLOW_HOME": str(home),
        "AIRFLOW__CORE__DAGS_FOLDER": str(ROOT / "dags"),
        "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
        "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": f"sqlite:///{home / 'airflow.db'}",
        "PYTHONPATH": str(ROOT),
        "DQ_MANIFEST": str(manifest),
        "DQ_CHECKS": ",".join(packages),
        "DQ_EXAMPLE_LAKE": str(home / "lake"),
        "DQ_FIXTURE_CSV": str(home / "numbers.csv"),
        "DQ_FIXTURE_LETTERS": str(home / "letters.csv"),
        "DQ_DATABASE_URL": f"sqlite:///{home / 'dq.db'}",
        "DQ_STATE_DIR": str(home / "state"),
        "DQ_CONFIG": str(home / "no-dq.toml"),
        "DQ_TASK_RETRY_DELAY_S": "0",
    }
