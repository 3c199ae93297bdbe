"""Alerting's modules import no module's private names, and no one imports alerting's."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).parents[2]


def _private_imports(path: Path) -> list[tuple[str, str]]:
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except SyntaxError:  # a deliberately broken fixture (tests/checks/broken_checks)
        return []
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            found += [(node.module, a.name) for a in node.names if a.name.startswith("_")]
    return found


def test_alerting_imports_no_private_names():
    offenders = {
        str(path.relative_to(ROOT)): names
        for path in sorted((ROOT / "alerting").rglob("*.py"))
        if (names := _private_imports(path))
    }
    assert offenders == {}


def test_no_one_imports_alerting_private_names():
    offenders = {}
    for package in ("scheduling", "checks", "checkers", "dags", "tests"):
        for path in sorted((ROOT / package).rglob("*.py")):
            names = [(m, n) for m, n in _private_imports(path) if m.split(".")[0] == "alerting"]
            if names:
                offenders[str(path.relative_to(ROOT))] = names
    assert offenders == {}
