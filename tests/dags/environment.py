"""The environment of the DAG tests: a temporary AIRFLOW_HOME running dags/ over the fixture
checks (tests/dags/fixture_checks.py), their CSV files, manifest and project database."""

from __future__ import annotations

import importlib
import os
import sys
from pathlib import Path

from scheduling.airflow.manifest import build_manifest, render
from tests.dags import fixture_checks

ROOT = Path(__file__).resolve().parents[2]
#: The Airflow example's quality gate: the DAG running the checks `after` producer/flights.
GATE = "dq_checks_after_name_producer_flights"
FIXTURES = [
    value
    for value in vars(fixture_checks).values()
    if isinstance(value, type)
    and value.__module__ == fixture_checks.__name__
    and not value.abstract
]


#: A team's check module the stand edits after its manifest was written (a stale manifest).
TEAM_MODULE = "team_edits"
TEAM_CHECK = """
from checkers import PredicateSingleDatasetChecker
from checks import QualityCheck
from scheduling.clocks import Cron
from tests.dags.fixture_checks import LETTERS


class TeamLettersShort(QualityCheck):
    description = "A team's check, edited after the manifest was generated."
    clock = Cron("*/15 * * * *")
    parser = LETTERS

    def checker(self, data):
        return PredicateSingleDatasetChecker(data, "length(c) < 5")
"""


def _team_check(teams: Path) -> type:
    """The team's module under `teams` (on sys.path while it is imported and hashed)."""
    teams.mkdir(exist_ok=True)
    (teams / f"{TEAM_MODULE}.py").write_text(TEAM_CHECK)
    sys.path.insert(0, str(teams))
    try:
        module = importlib.import_module(TEAM_MODULE)
        return module.TeamLettersShort  # type: ignore[no-any-return]
    finally:
        sys.path.remove(str(teams))


def dag_environment(
    home: Path, *, example: bool = False, edited_team: bool = False
) -> dict[str, str]:
    """DQ_* (and a few AIRFLOW_*) variables for the fixture checks under `home`; `example` adds
    the Airflow example's quality gate (examples/airflow/) and its lake under `home`;
    `edited_team` a team's module edited after the manifest was written (stale)."""
    packages = [fixture_checks.__name__]
    checks = list(FIXTURES)
    paths = [str(ROOT)]
    if example:
        from examples.airflow import flight_checks

        packages.append(flight_checks.__name__)
        checks.append(flight_checks.LandedFlightsHaveDestinations)
    teams = home / "teams"
    if edited_team:
        checks.append(_team_check(teams))
        packages.append(TEAM_MODULE)
        paths.append(str(teams))
    manifest = home / "manifest.json"
    sys.path.insert(0, str(teams))
    try:
        manifest.write_text(render(build_manifest(checks, packages=packages)))
    finally:
        sys.path.remove(str(teams))
    if edited_team:  # one appended comment, no new manifest
        with (teams / f"{TEAM_MODULE}.py").open("a") as module:
            module.write("# tuned the threshold's comment\n")
    (home / "numbers.csv").write_text("n\n1\n-2\n3\n")
    (home / "letters.csv").write_text("c\na\nB\nc\n")
    return {
        **os.environ,
        "AIRFLOW_HOME": str(home),
        "AIRFLOW__CORE__DAGS_FOLDER": str(ROOT / "dags"),
        "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
        "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": f"sqlite:///{home / 'airflow.db'}",
        "PYTHONPATH": os.pathsep.join(paths),
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
