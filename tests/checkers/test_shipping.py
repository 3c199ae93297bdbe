"""What dq-checkers ships to the executors and how a missing module reads (the real Connect
server and standalone cluster: tests/deployment)."""

from __future__ import annotations

import sys
import zipfile

import pytest

from checkers.shipping import explain_worker_error, package_zip, packages_to_ship, ship_checks


@pytest.fixture
def team(tmp_path, monkeypatch):
    root = tmp_path / "src"
    (root / "teampkg" / "sub").mkdir(parents=True)
    (root / "teampkg" / "__init__.py").write_text("")
    (root / "teampkg" / "sub" / "__init__.py").write_text("")
    (root / "teampkg" / "sub" / "rules.py").write_text("LIMIT = 3\n")
    (root / "teampkg" / "__pycache__").mkdir()
    (root / "teampkg" / "__pycache__" / "x.cpython-311.pyc").write_bytes(b"\0")
    (root / "loose.py").write_text("X = 1\n")
    monkeypatch.syspath_prepend(str(root))
    return root


def test_ships_dq_checks_packages_the_checks_and_dq_checkers_own() -> None:
    found = packages_to_ship(["teampkg.sub.rules", "__main__"], environ={"DQ_CHECKS": "a.b, c"})
    assert found == ("a", "alerting", "c", "checkers", "checks", "scheduling", "teampkg")
    assert "checks" in packages_to_ship(environ={})  # DQ_CHECKS defaults to checks


def test_the_zip_holds_the_package_files_without_bytecode_and_is_named_by_content(
    team, tmp_path
) -> None:
    first = package_zip(["teampkg", "loose", "not_importable_anywhere"], tmp_path / "out")
    names = set(zipfile.ZipFile(first).namelist())
    assert names == {
        "teampkg/__init__.py",
        "teampkg/sub/__init__.py",
        "teampkg/sub/rules.py",
        "loose.py",
    }
    assert package_zip(["loose", "teampkg"], tmp_path / "out") == first  # same content
    (team / "teampkg" / "sub" / "rules.py").write_text("LIMIT = 4\n")
    assert package_zip(["teampkg", "loose"], tmp_path / "out") != first
    assert "teampkg" not in sys.modules  # found, never imported


@pytest.mark.connect
def test_a_local_session_needs_nothing_shipped(spark) -> None:
    if type(spark).__module__.startswith("pyspark.sql.connect"):
        assert ship_checks(spark) is not None  # a Connect server never shares our paths
    else:
        assert ship_checks(spark) is None


@pytest.mark.parametrize(
    ("module", "needs"),
    [
        ("pyarrow", "install pandas and pyarrow there"),
        ("pandas.core", "install pandas and pyarrow there"),
        ("teamhelpers", "install teamhelpers there, or list its package in DQ_CHECKS"),
    ],
)
def test_a_missing_module_names_what_the_executors_need(module, needs) -> None:
    raw = f"Python worker: ModuleNotFoundError: No module named '{module}'"
    text = explain_worker_error(raw)
    assert text.startswith(raw)
    assert f"The executors' Python cannot import '{module.split('.')[0]}'" in text
    assert needs in text
    assert f"Python {sys.version_info.major}.{sys.version_info.minor} like this client" in text
    assert explain_worker_error("ZeroDivisionError: division by zero") == (
        "ZeroDivisionError: division by zero"
    )
