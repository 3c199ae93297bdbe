"""`dq init`: the scaffold's files, its refusals (exit 2, nothing written), a dq.toml whose
commented examples are valid configuration, and `dq list` before and after it. The scaffold's
check and test on Spark: tests/scheduling/test_newcomer.py."""

from __future__ import annotations

import re
import sys
import uuid
from pathlib import Path

import pytest

from alerting.config import load_config
from checkers.levels import AlertLevel
from scheduling.cli import main
from scheduling.cli.scaffold import scaffold_files


@pytest.fixture
def project(tmp_path, monkeypatch) -> Path:
    """An empty project directory as the working directory, without dq settings."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))  # dq puts the project on it: restored
    for name in ("DQ_CHECKS", "DQ_CONFIG"):
        monkeypatch.delenv(name, raising=False)
    return tmp_path


def _package() -> str:
    return f"team_{uuid.uuid4().hex[:8]}"  # each test imports its own


def test_init_writes_a_package_a_check_its_data_dq_toml_and_a_test(project, capsys):
    package = _package()
    assert main(["init", package]) == 0
    written = sorted(str(p.relative_to(project)) for p in project.rglob("*") if p.is_file())
    assert written == sorted(
        [
            "data/orders.csv",
            "dq.toml",
            f"{package}/__init__.py",
            f"{package}/orders.py",
            f"tests/test_{package}.py",
        ]
    )
    assert f'checks = ["{package}"]' in (project / "dq.toml").read_text()
    test = (project / "tests" / f"test_{package}.py").read_text()
    assert f"from {package}.orders import OrdersHaveAmounts" in test and "(spark)" in test
    out = capsys.readouterr().out
    assert all(f"created {p}" in out for p in written)
    assert main(["list", "--at", "2024-05-01T10:00"]) == 0  # dq.toml's package, from beside it
    assert capsys.readouterr().out.split()[0] == "orders_have_amounts"


def test_init_refuses_to_overwrite_and_writes_nothing(project, capsys):
    package = _package()
    (project / "dq.toml").write_text("# ours\n")
    assert main(["init", package]) == 2
    err = capsys.readouterr().err
    assert "would overwrite dq.toml" in err and "nothing was written" in err
    assert f'add checks = ["{package}"] to it' in err
    assert [p.name for p in project.iterdir()] == ["dq.toml"]
    assert (project / "dq.toml").read_text() == "# ours\n"


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("team-checks", "is not a Python package name"),
        ("class", "is not a Python package name"),
        ("checks", "is taken by dq-checkers"),
        ("json", "already importable"),
    ],
)
def test_init_refuses_names_that_cannot_be_the_teams_package(project, capsys, name, reason):
    assert main(["init", name]) == 2
    assert reason in capsys.readouterr().err
    assert list(project.iterdir()) == []


def test_the_dq_toml_examples_are_valid_configuration_once_uncommented(tmp_path, monkeypatch):
    text = scaffold_files("teamchecks")[Path("dq.toml")]
    uncommented = re.sub(r"^# (?=\[|[a-z_]+ = )", "", text, flags=re.MULTILINE)
    (tmp_path / "dq.toml").write_text(uncommented)
    # a *_env must name a variable set where the file is read (the secrets' own are not needed)
    for variable in re.findall(r'^[a-z_]+_env = "([A-Z0-9_]+)"', uncommented, re.MULTILINE):
        monkeypatch.setenv(variable, "set")
    config = load_config(tmp_path / "dq.toml")
    assert sorted(config.receivers) == ["team-mail", "team-slack"]
    assert config.policy().routes == {
        "team-slack": AlertLevel.WARNING,
        "team-mail": AlertLevel.ERROR,
    }


def test_without_checks_dq_says_how_to_point_it_at_them(project, capsys):
    assert main(["list"]) == 0
    err = capsys.readouterr().err
    assert "no checks found in checks" in err
    assert "DQ_CHECKS=" in err and 'checks = ["teamchecks"]' in err and "dq init" in err
