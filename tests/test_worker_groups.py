"""`make test` hands an xdist worker each entry of ONE_WORKER (a package or module of costly
fixtures) whole, so its fixtures are built once: split over both workers, the deployment module
builds its Connect server and standalone cluster twice, tests/dags its Airflow stand. Any other
test is a unit of its own (tests/conftest.py's scheduler)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

from tests.conftest import group_of

ROOT = Path(__file__).resolve().parents[1]
#: Quick tests with no Spark session: two modules of one package, and a module of another.
MODULES = (
    "tests/alerting/test_escaping.py",
    "tests/alerting/test_stages.py",
    "tests/scheduling/test_clocks.py",
)


def test_an_entry_of_costly_fixtures_is_one_unit_any_other_test_its_own():
    assert group_of("tests/dags/test_dag.py::test_x[a::b]") == "tests/dags"
    module = "tests/deployment/test_python_predicates.py"
    assert group_of(f"{module}::test_local_run_counts") == module
    test = "tests/checks/test_incremental.py::test_z[p]"
    assert group_of(test) == test


def test_a_one_worker_package_and_module_each_run_on_one_worker(tmp_path):
    """With make test's options, tests/alerting and test_clocks declared one-worker entries."""
    make = (ROOT / "Makefile").read_text()
    options = ["-n", "2", "--dist", "loadscope", "--no-loadscope-reorder"]
    assert f"pytest -q {' '.join(options)} --durations" in make  # what make test runs
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-v", *options, f"--basetemp={tmp_path}", *MODULES],
        cwd=ROOT,
        env={**os.environ, "DQ_TEST_ONE_WORKER": f"tests/alerting {MODULES[2]}"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    workers: dict[str, set[str]] = defaultdict(set)
    for worker, nodeid in re.findall(r"^\[(gw\d+)\] \[\s*\d+%\] PASSED (\S+)", done.stdout, re.M):
        workers[nodeid.split("::")[0]].add(worker)
    assert set(workers) == set(MODULES)
    alerting = workers[MODULES[0]] | workers[MODULES[1]]
    assert len(alerting) == 1, dict(workers)  # the package on one worker
    assert len(workers[MODULES[2]]) == 1, dict(workers)  # the module on one worker
