"""The library's Spark Connect-specific code, and what keeps the Connect pass honest.

The Connect pass (`make test`) runs only the tests marked `connect`. A function is
Connect-specific when its code says so (the word "Connect"), or uses what behaves differently over
Connect: plan analysis, Arrow transfer of binary values (`bytes`), Python UDFs, JDBC through the
server, `inputFiles()`, artifacts and remote sessions. `connect_sites()` finds them in the source;
`tests/test_connect_paths.py` fails when one is in none of the three lists below, and the Connect
pass (`--connect-audit`) fails when a function of `OVER_CONNECT` was not called by its tests.
"""

from __future__ import annotations

import ast
import functools
import importlib
import inspect
import re
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("checkers", "checks", "scheduling", "alerting")

#: Run by `connect`-marked tests over a Spark Connect session: site -> what differs there.
OVER_CONNECT: dict[str, str] = {
    "scheduling.tick.sources:_cancel": "a late source's operation interrupted by its tag",
    "checkers.parsers._shadowing:refuse_shadowing": "inputFiles() through the server",
    "checkers.parsers.parquet_footers:footers_of": "inputFiles() through the server",
    "checkers.parsers._malformed:first_malformed": "inputFiles() through the server",
    "checkers.parsers.format_sources:format_source": "a missing data source found at analysis",
    "checkers.metrics._scan:analysis_error": "plan analysis isolates a bad analyzer",
    "checkers.errors:describe_failure": "Connect's error messages",
    "checkers.metrics.runner:_filter_error": "a filter's schema is answered from the child's",
    "checkers.metrics.runner:_reads_columnar_files": "inputFiles() through the server",
    "checkers.metrics._check_core:_value_rows": "a Python UDF judging values",
    "checkers.predicates:python_condition": "a pandas UDF over struct arguments",
    "checkers.predicates:python_row_condition": "a pandas UDF over rows",
    "checkers.parsers.jdbc:_load": "JDBC read by the server",
    "checkers.parsers._records:records_frame": "Arrow refuses an empty table",
    "checkers.metrics.sketches:ApproxCountDistinct.state_from_aggregates": "HLL bytes via Arrow",
    "checkers.metrics.sketches:_Quantiles.state_from_aggregates": "KLL bytes via Arrow",
    "checkers.metrics.samples:DistinctCount.state_from_aggregates": "theta bytes via Arrow",
    "checkers.metrics.samples:_Sample.state_from_aggregates": "sample rows via Arrow",
    "checkers.checker:rows_to_dicts": "failing-row samples via Arrow",
    "checkers.checker:same_data": "semantic plan equality answered by the server",
    "checkers.checker:pass_groups": "one plan hash per distinct frame, asked of the server",
    "checkers.outcome:json_safe": "binary values arrive as bytes, not bytearray",
    "checkers.shipping:_session_key": "a Connect session is shipped to by its id",
    "checkers.shipping:ship_packages": "artifacts added to a Connect session",
    "checkers.spark:spark_target": "a remote URL chooses Spark Connect",
    "checkers.spark:spark_session": "a remote session from the factory",
    "checkers.spark:require_connect_server": "the server is probed before the client retries",
    "checkers.spark_logs:quiet_connect_client": "the Connect client's progress bar",
    "scheduling.tick.digests:canonical_conditions": "a condition as the server names it",
}

#: Connect-specific, exercised over a real Connect server in another process: site -> test.
IN_SUBPROCESS: dict[str, str] = {
    "scheduling.cli.doctor:executors_finding": (
        "tests/deployment/test_python_predicates.py::"
        "test_doctor_names_the_module_the_executors_cannot_import"
    ),
    "checkers.shipping:explain_worker_error": (
        "tests/deployment/test_python_predicates.py::"
        "test_a_module_the_executors_cannot_import_is_an_error_naming_it"
    ),
}

#: Found by the scan, but not about Spark Connect: site -> why.
UNRELATED: dict[str, str] = {
    "checkers.metrics.runner:_bytes_not_read": "the data files' byte count from their statistics",
    "checkers.project_db.engine:timeouts": "a database's connect timeout",
    "checks.pytest_plugin:spark": "calls checkers.spark.spark_session, which is OVER_CONNECT",
}

_WORD = re.compile(r"\bConnect\b")
_NAMES = {
    "addArtifacts",
    "applyInPandas",
    "bytearray",
    "bytes",
    "inputFiles",
    "is_connect",
    "mapInArrow",
    "mapInPandas",
    "pandas_udf",
    "remote",
    "session_id",
    "toArrow",
    "udf",
}


def _sites(tree: ast.Module) -> Iterator[tuple[str, int, int]]:
    """(qualified name, first line, last line) of each module-level function and method;
    nested functions belong to the function around them."""

    def visit(node: ast.AST, prefix: str) -> Iterator[tuple[str, int, int]]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                first = min([child.lineno, *(d.lineno for d in child.decorator_list)])
                yield prefix + child.name, first, child.end_lineno or child.lineno
            elif isinstance(child, ast.ClassDef):
                yield from visit(child, f"{prefix}{child.name}.")

    yield from visit(tree, "")


def _uses(node: ast.AST) -> bool:
    if isinstance(node, ast.Attribute):
        return node.attr in _NAMES
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        return node.func.id in _NAMES  # bytes(...), a udf imported by name
    return isinstance(node, ast.Constant) and node.value == "jdbc"


def connect_sites() -> set[str]:
    """Every `module:function` of the library whose code is Connect-specific (see above)."""
    found = set()
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            text = path.read_text()
            tree = ast.parse(text)
            module = ".".join(path.relative_to(ROOT).with_suffix("").parts)
            lines = {n for n, line in enumerate(text.splitlines(), 1) if _WORD.search(line)}
            lines |= {n.lineno for n in ast.walk(tree) if _uses(n) and hasattr(n, "lineno")}
            for name, first, last in _sites(tree):
                if any(first <= n <= last for n in lines):
                    found.add(f"{module}:{name}")
    return found


def resolve(site: str) -> tuple[object, str, object]:
    """(owner, attribute, object) of `module:Class.method` or `module:function`."""
    module_name, _, qualname = site.partition(":")
    owner: object = importlib.import_module(module_name)
    *path, name = qualname.split(".")
    for part in path:
        owner = getattr(owner, part)
    return owner, name, inspect.getattr_static(owner, name)


def _recording(
    site: str, function: Callable[..., object], called: set[str]
) -> Callable[..., object]:
    @functools.wraps(function)
    def recorded(*args: object, **kwargs: object) -> object:
        called.add(site)
        return function(*args, **kwargs)

    return recorded


def watch(sites: list[str], called: set[str]) -> Callable[[], None]:
    """Wrap each site so that calling it adds the site to `called`: in its owner, and in every
    module of the library or the tests that imported it by name. Returns what undoes it."""
    replaced: list[tuple[object, str, object]] = []
    for site in sites:
        owner, name, original = resolve(site)
        if not inspect.isfunction(original):
            raise TypeError(f"{site} is not a plain function or method")
        wrapper = _recording(site, original, called)
        replaced.append((owner, name, original))
        setattr(owner, name, wrapper)
        for module in list(sys.modules.values()):
            if not getattr(module, "__name__", "").startswith((*PACKAGES, "tests")):
                continue
            for attribute, value in list(vars(module).items()):
                if value is original:
                    replaced.append((module, attribute, original))
                    setattr(module, attribute, wrapper)

    def undo() -> None:
        for owner, name, original in reversed(replaced):
            setattr(owner, name, original)

    return undo
