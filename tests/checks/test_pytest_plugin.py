"""The shipped pytest plugin (checks/pytest_plugin.py), loaded as a team's pytest loads it (`-p`
does what the `pytest11` entry point does once dq-checkers is installed), in a project outside
this repository: its fixtures are there, Spark is not imported until a test asks for it, and a
project's own `spark` fixture in a conftest.py wins. (Its `spark` fixture on a real session:
tests/scheduling/test_newcomer.py.)"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PYTEST = ("-m", "pytest", "-p", "checks.pytest_plugin", "-p", "no:cacheprovider")


def _pytest(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *PYTEST, *args],
        cwd=project,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        check=False,
    )


def test_the_plugin_offers_spark_and_assert_outcome_and_imports_spark_lazily(tmp_path):
    (tmp_path / "test_a_plain.py").write_text(
        "import sys\n\n"
        "def test_spark_is_not_imported_for_a_test_without_it():\n"
        "    assert 'pyspark' not in sys.modules\n"
    )
    (tmp_path / "test_b_helper.py").write_text(
        "def test_the_fixture_is_the_helper(assert_outcome):\n"
        "    assert (assert_outcome.__module__, assert_outcome.__name__) == "
        "('checks.testing', 'assert_outcome')\n"
    )
    run = _pytest(tmp_path, "-q")
    assert run.returncode == 0, run.stdout + run.stderr
    listing = _pytest(tmp_path, "--fixtures").stdout
    shipped = listing.split("fixtures defined from checks.pytest_plugin")[1]
    assert "spark [session scope] --" in shipped and "assert_outcome --" in shipped


def test_a_projects_own_spark_fixture_wins_over_the_plugins(tmp_path):
    (tmp_path / "conftest.py").write_text(
        "import pytest\n\n"
        "@pytest.fixture(scope='session')\n"
        "def spark():\n"
        "    return 'the project conftest session'\n"
    )
    (tmp_path / "test_own.py").write_text(
        "import sys\n\n"
        "def test_the_conftest_fixture_is_used(spark):\n"
        "    assert spark == 'the project conftest session'\n"
        "    assert 'pyspark' not in sys.modules  # the plugin's fixture never ran\n"
    )
    run = _pytest(tmp_path, "-q")
    assert run.returncode == 0, run.stdout + run.stderr
