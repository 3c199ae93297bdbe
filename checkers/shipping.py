"""Shipping the check packages to the executors, so Python predicates (UDFs) run off the laptop:
the configured check packages (checkers.check_packages), those of the checks being evaluated and
dq-checkers' own are zipped from where this process imports them and added to the session once
(`addArtifacts(pyfile=True)`; Spark Connect and classic clusters alike). A local master needs
nothing: its Python workers share this machine's files."""

from __future__ import annotations

import hashlib
import importlib.util
import os
import re
import sys
import tempfile
import threading
import zipfile
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from checkers.check_packages import CHECKS_ENV, checks_packages

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

#: dq-checkers' own packages: a check module imports them, and so does its predicate's unpickling.
OWN_PACKAGES = ("alerting", "checkers", "checks", "scheduling")
DEPLOYMENT_DOC = "docs/deployment.md"

_shipped: set[tuple[str, str]] = set()  # (session, zip name) pairs already added
_lock = threading.Lock()


def packages_to_ship(
    modules: Iterable[str] = (), *, environ: Mapping[str, str] | None = None
) -> tuple[str, ...]:
    """Top-level packages the executors need: the check packages, those of `modules` (the checks'
    modules) and dq-checkers' own, sorted."""
    names = [*checks_packages(environ), *modules, *OWN_PACKAGES]
    return tuple(sorted({n.split(".")[0] for n in names if n and n != "__main__"}))


def _sources(package: str) -> Iterator[tuple[str, Path]]:
    """(name in the zip, file) for every file of an importable top-level package or module;
    nothing when it is not importable. Finds the files without importing the package."""
    spec = importlib.util.find_spec(package)
    if spec is None:
        return
    if spec.submodule_search_locations is None:
        if spec.origin and spec.origin.endswith(".py"):
            yield f"{package}.py", Path(spec.origin)
        return
    for location in spec.submodule_search_locations:
        root = Path(location)
        for path in sorted(root.rglob("*")):
            relative = path.relative_to(root)
            if path.is_file() and "__pycache__" not in relative.parts and path.suffix != ".pyc":
                yield f"{package}/{relative.as_posix()}", path


def package_zip(packages: Iterable[str], directory: Path | None = None) -> Path:
    """A zip of `packages`, named after its content (the same content is zipped once)."""
    entries = sorted({name: path for p in packages for name, path in _sources(p)}.items())
    digest = hashlib.sha256()
    for name, path in entries:
        digest.update(name.encode() + b"\0" + path.read_bytes() + b"\0")
    folder = directory or Path(tempfile.gettempdir()) / f"dq-checkers-{os.getuid()}"
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / f"dq-packages-{digest.hexdigest()[:16]}.zip"
    if not target.exists():
        partial = target.with_suffix(f".{os.getpid()}.{threading.get_ident()}.tmp")
        with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED) as archive:
            for name, path in entries:
                archive.write(path, name)
        os.replace(partial, target)  # atomic: a concurrent process sees all or nothing
    return target


def is_connect(spark: SparkSession) -> bool:
    return type(spark).__module__.startswith("pyspark.sql.connect")


def _session_key(spark: SparkSession) -> str | None:
    """Who to ship to: a Connect session, or a classic application off this machine (None for a
    local master, whose Python workers import from this machine's paths)."""
    if is_connect(spark):
        return f"connect:{spark.session_id}"  # type: ignore[attr-defined]
    if str(spark.conf.get("spark.master", "local")).startswith("local"):
        return None
    return f"classic:{spark.conf.get('spark.app.id')}"


def ship_packages(spark: SparkSession, packages: Iterable[str]) -> Path | None:
    """Add a zip of `packages` to the session's Python path on the executors, once per session;
    returns the zip (None for a local master)."""
    key = _session_key(spark)
    if key is None:
        return None
    archive = package_zip(packages)
    with _lock:
        if (key, archive.name) in _shipped:
            return archive
        spark.addArtifacts(str(archive), pyfile=True)
        _shipped.add((key, archive.name))
    return archive


def ship_checks(spark: SparkSession, modules: Iterable[str] = ()) -> Path | None:
    """Ship what Python predicates of checks defined in `modules` need (`packages_to_ship`)."""
    return ship_packages(spark, packages_to_ship(modules))


_MISSING = re.compile(r"ModuleNotFoundError: No module named '([\w.]+)'")
_ARROW = ("pandas", "pyarrow", "numpy")


def explain_worker_error(message: str) -> str:
    """A Python worker's error, with what the executors' Python needs when it lacks a module."""
    found = _MISSING.search(message)
    if found is None:
        return message
    module = found.group(1).split(".")[0]
    if module in _ARROW:
        fix = "install pandas and pyarrow there (Python predicates run as Arrow UDFs)"
    else:
        fix = (
            f"install {module} there, or list its package in {CHECKS_ENV} so dq-checkers "
            "ships it with the checks"
        )
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    return (
        f"{message}. The executors' Python cannot import {module!r}: {fix}. It must also be "
        f"Python {version} like this client (PYSPARK_PYTHON of the cluster or Connect server); "
        f"see {DEPLOYMENT_DOC}"
    )
