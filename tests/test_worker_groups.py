"""`make test` hands each xdist worker whole modules, and whole packages of ONE_WORKER_PACKAGES, so
their fixtures are built once: split over both workers, a module builds its Connect server or
standalone cluster twice, a package its Airflow stand (tests/conftest.py's scheduler)."""

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


def test_a_package_of_costly_fixtures_is_one_group_any_other_module_its_own():
    assert group_of("tests/dags/test_dag.py::test_x[a::b]") == "tests/dags"
    assert group_of("tests/checks/examples/test_demo.py::test_y") == "tests/checks/examples"
    assert (
        group_of("tests/checks/test_incremental.py::test_z[p]")
        == "tests/checks/test_incremental.py"
    )


def test_a_module_and_a_one_worker_package_each_run_on_one_worker(tmp_path):
    """With make test's options, and tests/alerting declared a one-worker package."""
    make = (ROOT / "Makefile").read_text()
    options = ["-n", "2", "--dist", "loadscope", "--no-loadscope-reorder"]
    assert f"pytest -q {' '.join(options)} --durations" in make  # what make test runs
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-v", *options, f"--basetemp={tmp_path}", *MODULES],
        cwd=ROOT,
        env={**os.environ, "DQ_TEST_ONE_WORKER_PACKAGES": "tests/alerting"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    workers: dict[str, set[str]] = defaultdict(set)
    for worker, nodeid in re.findall(r"^\[(gw\d+)\] \[\s*\d+%\] PASSED (\S+)", done.stdout, re.M):
        workers[nodeid.split("::")[0]].add(worker)
    assert set(workers) == set(MODULES)
    assert all(len(w) == 1 for w in workers.values()), dict(workers)  # no module split
    alerting = workers[MODULES[0]] | workers[MODULES[1]]
    assert len(alerting) == 1, dict(workers)  # the package on one worker
