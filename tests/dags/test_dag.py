"""The DAG under a real Airflow, without a scheduler: DagBag imports (parse-time purity, a stale
manifest parsed all the same, a missing one the DAG's import error), the committed manifest, and
the manual-run window. The scheduled tick, task states and assets are in test_scheduled_tick."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from scheduling.airflow.manifest import build_manifest, render
from tests.dags.environment import dag_environment

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def airflow_env(tmp_path_factory, migrated_airflow_db) -> dict[str, str]:
    home = tmp_path_factory.mktemp("airflow")
    shutil.copy(migrated_airflow_db, home / "airflow.db")  # the session's migration, copied
    return dag_environment(home)


def _dagbag(env: dict[str, str]) -> list[str]:
    code = (
        "from airflow.dag_processing.dagbag import DagBag; import sys; "
        "bag = DagBag(); dq = bag.dags.get('dq_checks'); "
        "print(sorted(dq.task_ids) if dq else None, len(dq.params) if dq else None); "
        "print(sorted(bag.dags)); print(list(bag.import_errors.values())); "
        "print('pyspark' in sys.modules, 'checks' in sys.modules)"
    )
    return subprocess.run(
        [sys.executable, "-c", code], env=env, check=True, capture_output=True, text=True
    ).stdout.splitlines()


def _python_lines(code: str, env: dict[str, str]) -> list[str]:
    """The lines `code` prints, run by this Python from the repository's root under `env`."""
    return subprocess.run(
        [sys.executable, "-c", code], env=env, check=True, capture_output=True, text=True, cwd=ROOT
    ).stdout.splitlines()


def test_dagbag_parses_without_spark_or_the_checks(airflow_env):
    tasks, dags, errors, imported = _dagbag(airflow_env)[-4:]
    assert dags == "['dq_checks']" and errors == "[]"
    assert imported == "False False"  # parsing imported neither Spark nor the checks
    # three tasks, whatever the number of checks (the committed manifest's): a tick's task
    # instances are evaluate, tick and one `outcome` instance per check that did not pass
    assert tasks == "['evaluate', 'outcome', 'tick'] 0"


def test_a_stale_manifest_still_parses_a_missing_one_is_the_import_error(airflow_env, tmp_path):
    package = tmp_path / "team_checks"
    shutil.copytree(ROOT / "tests" / "dags", package, ignore=shutil.ignore_patterns("test_*"))
    manifest = tmp_path / "manifest.json"
    env = {
        **airflow_env,
        "PYTHONPATH": f"{tmp_path}{os.pathsep}{ROOT}",
        "DQ_MANIFEST": str(manifest),
    }
    code = (
        "import json, sys; from scheduling.airflow.manifest import build_manifest, render; "
        "manifest = build_manifest([], packages=['team_checks']); "
        "open(sys.argv[1], 'w').write(render(manifest))"
    )
    subprocess.run([sys.executable, "-c", code, str(manifest)], env=env, check=True)
    assert _dagbag(env)[-2] == "[]"  # current
    (package / "new_team_check.py").write_text("X = 1\n")  # a check nobody put in the manifest
    dags, errors = _dagbag(env)[-3:-1]
    assert (dags, errors) == ("['dq_checks']", "[]")  # one team's edit stops nobody's checks
    manifest.unlink()
    assert "no check manifest at" in _dagbag(env)[-2]


def test_committed_manifest_matches_the_example_checks():
    """The repository's DAG runs the shipped examples (the demo warehouse under Airflow)."""
    from checks.registry import discover_all

    found = discover_all("checks.examples")
    packages = ["checks.examples"]
    expected = render(build_manifest(found.checks.values(), found.problems, packages=packages))
    committed = (ROOT / "dags" / "dq_checks.json").read_text()
    assert json.loads(committed) == json.loads(expected), "run `make manifest` after editing them"


def test_manual_runs_without_a_logical_date_use_the_trigger_time(airflow_env):
    code = """
import datetime as dt, sys, types
import dags.dq_checks as module
after = dt.datetime(2026, 11, 22, 7, 0, tzinfo=dt.UTC)
module.get_current_context = lambda: {"dag_run": types.SimpleNamespace(run_after=after)}
start, end = module._window()
print(start.isoformat(), end.isoformat())
from scheduling.airflow.tasks import due
print(sorted(e.name for e in due(module.ENTRIES, start, end)), 'pyspark' in sys.modules)
"""
    out = _python_lines(code, airflow_env)
    assert out[-2] == "2026-11-22T06:45:00+00:00 2026-11-22T07:00:00+00:00"
    planned, spark = out[-1].rsplit(" ", 1)
    assert "'every_quarter_positive'" in planned and "nightly_small" not in planned
    assert spark == "False"  # choosing the due checks needs no Spark


def test_an_outcome_or_tick_task_imports_neither_spark_nor_the_alerting_pipeline(airflow_env):
    """Each red check of a tick is a task process of its own after `evaluate`: what its callable
    (and `tick`'s) runs on a first try imports no module of Spark, alerting or the tick."""
    code = """
import datetime as dt, sys
import dags.dq_checks as module
from scheduling.airflow.tasks import OutcomeFailed, settle, tick_done
end = dt.datetime(2026, 11, 22, 7, tzinfo=dt.UTC)
start = end - dt.timedelta(minutes=15)
red = {"check": "numbers_odd", "status": "failed", "level": "ERROR", "summary": "numbers_odd: 1/3"}
try:
    settle(module.BY_NAME["numbers_odd"], red, attempt=1, start=start, end=end)
except OutcomeFailed as failed:
    print(failed.code)
print(tick_done(["numbers_odd"], {"numbers_odd": red}))
heavy = ("pyspark", "alerting", "scheduling.tick", "scheduling.claims", "scheduling.runner")
print(sum(1 for m in sys.modules if m.startswith(heavy)))
"""
    out = _python_lines(code, airflow_env)
    assert out[-3:] == [
        "numbers_odd: 1/3",  # the red instance's failure: its one line
        "1 check(s) evaluated; 1 not green: numbers_odd",
        "0",  # modules of Spark, alerting and the tick imported
    ]
