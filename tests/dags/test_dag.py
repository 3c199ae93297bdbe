"""The DAG under a real Airflow: `airflow dags test` for one data interval in a temporary
AIRFLOW_HOME (SQLite metadata DB), a DagBag import test, and parse-time purity."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import sqlalchemy as sa

from checkers.storage import runs
from scheduling.manifest import build_manifest

ROOT = Path(__file__).resolve().parents[2]
AIRFLOW = Path(sys.executable).with_name("airflow")


@pytest.fixture(scope="module")
def airflow_env(tmp_path_factory) -> dict[str, str]:
    home = tmp_path_factory.mktemp("airflow")
    from tests.dags import fixture_checks

    manifest = home / "manifest.json"
    manifest.write_text(
        json.dumps(
            build_manifest([fixture_checks.EveryQuarterPositive, fixture_checks.NightlySmall])
        )
    )
    csv = home / "numbers.csv"
    csv.write_text("n\n1\n-2\n3\n")
    env = {
        **os.environ,
        "AIRFLOW_HOME": str(home),
        "AIRFLOW__CORE__DAGS_FOLDER": str(ROOT / "dags"),
        "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
        "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": f"sqlite:///{home / 'airflow.db'}",
        "PYTHONPATH": str(ROOT),
        "DQ_MANIFEST": str(manifest),
        "DQ_CHECKS": "tests.dags.fixture_checks",
        "DQ_FIXTURE_CSV": str(csv),
        "DQ_DATABASE_URL": f"sqlite:///{home / 'dq.db'}",
        "DQ_STATE_DIR": str(home / "state"),
        "DQ_CONFIG": str(home / "no-dq.toml"),
    }
    subprocess.run([str(AIRFLOW), "db", "migrate"], env=env, check=True, capture_output=True)
    return env


def test_dagbag_has_no_import_errors(airflow_env):
    code = (
        "from airflow.dag_processing.dagbag import DagBag; import sys; "
        "bag = DagBag(); print(len(bag.dags), bag.import_errors); "
        "print('pyspark' in sys.modules, 'checks' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], env=airflow_env, check=True, capture_output=True, text=True
    ).stdout.splitlines()
    assert out[-2] == "1 {}"
    assert out[-1] == "False False"  # parsing imported neither Spark nor the checks


def test_one_interval_runs_the_due_check_and_skips_the_other(airflow_env):
    result = subprocess.run(
        [str(AIRFLOW), "dags", "test", "dq_checks", "2026-11-22T07:00:00+00:00"],
        env=airflow_env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-3000:]
    engine = sa.create_engine(airflow_env["DQ_DATABASE_URL"])
    with engine.connect() as connection:
        ran = connection.execute(
            sa.select(runs.c.check_name, runs.c.status, runs.c.window_start, runs.c.window_end)
        ).all()
    assert [(r[0], r[1]) for r in ran] == [("every_quarter_positive", "failed")]
    assert (ran[0][3] - ran[0][2]).total_seconds() == 15 * 60  # the run's data interval
    assert "[DQ] ERROR: every_quarter_positive" in output  # the console receiver
    alerts = Path(airflow_env["DQ_STATE_DIR"], "alerts.jsonl").read_text()
    assert "every_quarter_positive" in alerts and "nightly_small" not in alerts


def test_committed_manifest_matches_the_registered_checks():
    import checks.examples as examples

    expected = build_manifest([getattr(examples, n) for n in examples.__all__])
    committed = json.loads((ROOT / "dags" / "dq_checks.json").read_text())
    assert committed == expected, "run `dq manifest` after changing checks"


def test_manual_runs_without_a_logical_date_use_the_trigger_time(airflow_env):
    code = """
import datetime as dt, sys, types
import dags.dq_checks as module
after = dt.datetime(2026, 11, 22, 7, 0, tzinfo=dt.UTC)
module.get_current_context = lambda: {"dag_run": types.SimpleNamespace(run_after=after)}
start, end = module._window()
print(start.isoformat(), end.isoformat())
print(module._is_due({"cron": "*/15 * * * *", "tz": "UTC"}),
      module._is_due({"cron": "0 3 * * *", "tz": "UTC"}), 'pyspark' in sys.modules)
"""
    out = subprocess.run(
        [sys.executable, "-c", code],
        env=airflow_env,
        check=True,
        capture_output=True,
        text=True,
        cwd=ROOT,
    ).stdout.splitlines()
    assert out[-2] == "2026-11-22T06:45:00+00:00 2026-11-22T07:00:00+00:00"
    assert out[-1] == "True False False"  # gates decide without Spark
