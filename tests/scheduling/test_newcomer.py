"""A team's first hour, as real processes in an empty directory outside the repository (what a
team has after installing dq-checkers): `dq init`, then the README's check pasted into the new
package, its README test passing on the shipped `spark` fixture (the plugin's entry point, no
conftest), and `dq run --due` running only the team's checks, with the README's exit codes."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from checkers.outcome import Status
from scheduling.history import history
from scheduling.schema import project_database
from tests.markdown import ROOT, python_blocks

# A new team's whole path, in `dq` processes. `make test-fast` skips it.
pytestmark = pytest.mark.slow

DQ = Path(sys.executable).with_name("dq")
PYTEST = Path(sys.executable).with_name("pytest")


def _installed(site: Path) -> dict[str, str]:
    """The environment of a project where dq-checkers is installed: this checkout importable,
    and its entry points (pyproject.toml) registered the way pip registers them."""
    info = site / "dq_checkers_under_test-0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: dq-checkers-under-test\n")
    groups = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["entry-points"]
    (info / "entry_points.txt").write_text(
        "".join(
            f"[{group}]\n" + "".join(f"{name} = {target}\n" for name, target in points.items())
            for group, points in groups.items()
        )
    )
    kept = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("DQ_", "PYTEST_")) and k != "PYTHONPATH"
    }
    return {**kept, "PYTHONPATH": f"{site}{os.pathsep}{ROOT}"}


def _run(command: list[str | Path], project: Path, env: dict[str, str]):  # type: ignore[no-untyped-def]
    return subprocess.run(
        [str(c) for c in command], cwd=project, env=env, capture_output=True, text=True
    )


def _readme_check_and_test() -> tuple[str, str, str]:
    """The README's check (its code and class name) and the test of it."""
    blocks = [b.code for b in python_blocks(ROOT / "README.md")]
    check = next(code for code in blocks if "(QualityCheck):" in code)
    test = next(code for code in blocks if "def test_" in code)
    name = re.search(r"class (\w+)\(QualityCheck\)", check)[1]  # type: ignore[index]
    return check, name, test


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def test_a_new_team_scaffolds_pastes_the_readme_check_tests_it_and_runs_only_its_checks(
    tmp_path,
):
    project = tmp_path / "team-project"
    project.mkdir()
    env = _installed(tmp_path / "site")
    manifest = json.loads((ROOT / "dags" / "dq_checks.json").read_text())
    examples = {c["name"] for c in manifest["checks"]}  # the repository's DAG runs the examples

    init = _run([DQ, "init", "teamchecks"], project, env)
    assert init.returncode == 0, init.stderr
    first = _run([DQ, "run", "--due", "--at", "2024-05-01T10:00"], project, env)
    assert first.returncode == 0, first.stdout + first.stderr  # the README: exit 0, tolerated
    assert "orders_have_amounts" in first.stdout

    check, cls, readme_test = _readme_check_and_test()
    (project / "teamchecks" / "airports.py").write_text(check)
    (project / "tests" / "test_airports.py").write_text(
        f"from teamchecks.airports import {cls}\n\n{readme_test}"
    )
    tests = _run([PYTEST, "-q", "-p", "no:cacheprovider", "tests"], project, env)
    assert tests.returncode == 0, tests.stdout + tests.stderr
    assert "3 passed" in tests.stdout and not (project / "conftest.py").exists()

    run = _run([DQ, "run", "--due", "--at", "2024-05-01T11:00"], project, env)
    output = run.stdout + run.stderr
    assert run.returncode == 3, output  # the README's check has no lake here: could not run
    assert "orders_have_amounts" in run.stdout and _snake(cls) in run.stdout
    assert not [name for name in examples if name in output]
    database = project_database(f"sqlite:///{project / '.dq' / 'dq.db'}")  # dq's default
    recorded = [(r.outcome.check, r.outcome.status) for r in history(database, limit=100)]
    assert sorted(recorded) == [
        (_snake(cls), Status.ERROR),
        ("orders_have_amounts", Status.TOLERATED),
        ("orders_have_amounts", Status.TOLERATED),
    ]
