"""The import rules of docs/architecture.md, checked on every module of the library (lazy imports
inside functions count): which package may import which, and no private name of another package."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).parents[1]
PACKAGES = ("checkers", "checks", "alerting", "scheduling", "dags")

#: package -> the packages (or modules) it may import; a prefix allows everything below it.
ALLOWED = {
    "checkers": ("checkers",),
    "alerting": ("alerting", "checkers"),
    "checks": ("checks", "checkers", "alerting.policy", "scheduling.clocks"),
    "scheduling": ("scheduling", "checkers", "checks", "alerting"),
    "dags": ("dags", "scheduling", "checks", "checkers"),
}
#: module -> what it may import beyond its package's rule, and why (docs/architecture.md).
EXCEPTIONS = {
    "checks.testing": ("scheduling.tick",),  # a test runs a check as a tick would
}


def _modules() -> Iterator[tuple[str, Path]]:
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            if "broken" in path.parts:
                continue
            parts = path.relative_to(ROOT).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            yield name, path


def _imports(module: str, path: Path) -> Iterator[tuple[str, list[str]]]:
    """(imported module, names taken from it) for every import of ours in the file."""
    tree = ast.parse(path.read_text(), filename=str(path))
    package_parts = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, []
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: resolve against the importing package
                anchor = package_parts[: len(package_parts) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            yield base, [alias.name for alias in node.names]


def _ours(name: str) -> bool:
    return name.split(".")[0] in PACKAGES


def _allowed(module: str, target: str) -> bool:
    rules = ALLOWED[module.split(".")[0]] + EXCEPTIONS.get(module, ())
    return any(target == rule or target.startswith(rule + ".") for rule in rules)


def _private(target: str, names: list[str]) -> list[str]:
    found = [part for part in target.split(".") if part.startswith("_") and part != "__init__"]
    found += [n for n in names if n.startswith("_") and not n.startswith("__")]
    return found


def test_every_package_imports_only_what_the_architecture_allows():
    broken = [
        f"{module} imports {target}"
        for module, path in _modules()
        for target, _ in _imports(module, path)
        if _ours(target) and not _allowed(module, target)
    ]
    assert broken == []


def test_no_module_imports_a_private_name_of_another_package():
    broken = [
        f"{module} imports {', '.join(private)} from {target}"
        for module, path in _modules()
        for target, names in _imports(module, path)
        if _ours(target)
        and target.split(".")[0] != module.split(".")[0]
        and (private := _private(target, names))
    ]
    assert broken == []


def test_the_rules_catch_a_module_that_breaks_them():
    assert not _allowed("checkers.parsers.csv", "scheduling.settings")
    assert not _allowed("alerting.delivery", "checks.base")
    assert not _allowed("checks.base", "scheduling.tick.evaluate")
    assert _allowed("checks.testing", "scheduling.tick.evaluate")
    assert _allowed("checks.examples.volume", "scheduling.clocks")
    assert _private("checkers.metrics._scan", ["describe_failure"]) == ["_scan"]
    assert _private("checkers.project_db.engine", ["_timeouts", "timeouts"]) == ["_timeouts"]
    assert _private("checkers", ["__version__"]) == []


#: What a Spark Connect session has not: library code keeps to the DataFrame/Column API.
CLASSIC_ONLY_ATTRIBUTES = {"sparkContext", "rdd", "_jvm", "_jsc", "_jdf", "_jsparkSession", "_sc"}


def _classic_only_uses(source: str, where: str) -> list[str]:
    return [
        f"{where}:{node.lineno} .{node.attr}"
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Attribute) and node.attr in CLASSIC_ONLY_ATTRIBUTES
    ]


def test_no_library_module_reaches_past_the_dataframe_api():
    """No SparkContext, RDD or JVM gateway in the library: everything runs unchanged on classic
    Spark and on Spark Connect (tests may use them to measure, the library may not)."""
    found = [
        use
        for _, path in _modules()
        for use in _classic_only_uses(path.read_text(), str(path.relative_to(ROOT)))
    ]
    assert found == []


def test_the_dataframe_api_rule_catches_a_spark_context():
    source = "def f(spark, df):\n    return spark.sparkContext, df.rdd.count()\n"
    assert _classic_only_uses(source, "m.py") == ["m.py:2 .sparkContext", "m.py:2 .rdd"]
