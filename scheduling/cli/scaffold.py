"""`dq init <package>`: a new project's first files in the current directory: a checks package
with one runnable example check, the CSV it reads, a dq.toml naming the package, and a test
that uses the `spark` fixture shipped with dq-checkers. Nothing existing is overwritten."""

from __future__ import annotations

import importlib.util
import keyword
import sys
from pathlib import Path
from string import Template

from scheduling.cli import _init_templates as templates

#: Names a team's package cannot take: dq-checkers' own packages, and the scaffold's directories.
RESERVED = frozenset({"alerting", "checkers", "checks", "dags", "scheduling", "data", "tests"})
EXIT_OK, EXIT_USAGE = 0, 2


class ScaffoldError(ValueError):
    """The scaffold cannot be written (a bad package name, or files that already exist)."""


def scaffold_files(package: str) -> dict[Path, str]:
    """The files of `dq init <package>`, by path relative to the project directory."""
    files = {
        Path(package, "__init__.py"): templates.PACKAGE_INIT,
        Path(package, "orders.py"): templates.CHECK_MODULE,
        Path("data", "orders.csv"): templates.ORDERS_CSV,
        Path("dq.toml"): templates.DQ_TOML,
        Path("tests", f"test_{package}.py"): templates.TEST_MODULE,
    }
    return {path: Template(text).substitute(package=package) for path, text in files.items()}


def check_package_name(package: str, where: Path) -> None:
    """Raise ScaffoldError unless `package` can name a new, importable checks package."""
    if not package.isidentifier() or keyword.iskeyword(package):
        raise ScaffoldError(
            f"{package!r} is not a Python package name: use letters, digits and _ (e.g. teamchecks)"
        )
    if package in RESERVED:
        raise ScaffoldError(f"{package!r} is taken by dq-checkers or the scaffold: pick another")
    spec = importlib.util.find_spec(package) if package not in sys.modules else None
    elsewhere = spec is not None and spec.origin and not Path(spec.origin).is_relative_to(where)
    if package in sys.modules or elsewhere:
        raise ScaffoldError(f"a module named {package!r} is already importable: pick another")


def write_scaffold(package: str, where: Path) -> list[Path]:
    """Write the scaffold under `where`; raises ScaffoldError, writing nothing, when a file
    exists already or the name cannot be used. Returns the paths written."""
    check_package_name(package, where.resolve())
    files = scaffold_files(package)
    existing = [str(p) for p in files if (where / p).exists()]
    if existing:
        hint = (
            f' (to use an existing dq.toml, add checks = ["{package}"] to it)'
            if "dq.toml" in existing
            else ""
        )
        raise ScaffoldError(f"would overwrite {', '.join(existing)}; nothing was written{hint}")
    for path, text in files.items():
        target = where / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    return list(files)


def init_command(package: str, where: Path) -> int:
    """`dq init`: write the scaffold and say what to do next; exit 2 when it cannot."""
    try:
        written = write_scaffold(package, where)
    except ScaffoldError as exc:
        print(f"dq init: {exc}", file=sys.stderr)
        return EXIT_USAGE
    for path in written:
        print(f"created {path}")
    print(
        "\nnext, in this directory:\n"
        f"  pytest tests/           # the check's tests on a handful of rows\n"
        f"  dq list                 # the checks of {package}, from dq.toml's `checks`\n"
        "  dq run --due            # one scheduler tick: orders_have_amounts reads "
        "data/orders.csv\n"
        f"Add checks as modules of {package}/; docs/checkers.md has every checker and parser."
    )
    return EXIT_OK
