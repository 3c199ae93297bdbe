"""Every ```python block of README.md and docs/*.md runs as written: a file's blocks in order,
in one namespace, in a temporary working directory with its own project database and state,
on the test session's Spark (so `spark_session()` returns it). Test functions a block defines
(`def test_...(spark)`) are called too. Blocks fenced ```python fragment are not run."""

from __future__ import annotations

import contextlib
import inspect
import traceback
from collections.abc import Iterator
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from checkers.spark import DEFAULT_CONFIG
from checks import registry
from tests.markdown import DOCS, ROOT, python_blocks


@contextlib.contextmanager
def _registry_restored() -> Iterator[None]:
    """Checks a doc defines are registered only while its file runs (docs may reuse a name)."""
    before = dict(registry._REGISTRY)
    try:
        yield
    finally:
        registry._REGISTRY.clear()
        registry._REGISTRY.update(before)


@contextlib.contextmanager
def _conf_restored(spark: SparkSession) -> Iterator[None]:
    """`spark_session()` in a doc applies dq-checkers' defaults to the shared session: undone."""
    before = {key: spark.conf.get(key, None) for key in DEFAULT_CONFIG}
    try:
        yield
    finally:
        for key, value in before.items():
            if spark.conf.get(key, None) == value or not spark.conf.isModifiable(key):
                continue
            if value is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, value)


@pytest.fixture
def doc_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("DQ_STATE_DIR", str(tmp_path / ".dq"))
    monkeypatch.setenv("DQ_DATABASE_URL", f"sqlite:///{tmp_path / '.dq' / 'dq.db'}")
    for name in ("DQ_CHECKS", "DQ_CONFIG", "DQ_MANIFEST"):
        monkeypatch.delenv(name, raising=False)
    return tmp_path


@pytest.mark.parametrize("path", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_python_block_runs_as_written(path: Path, spark: SparkSession, doc_dir: Path):
    namespace: dict[str, object] = {"__name__": f"docs_{path.stem.lower()}"}
    fixtures = {"spark": spark, "tmp_path": doc_dir}
    with _registry_restored(), _conf_restored(spark):
        for block in python_blocks(path):
            try:
                exec(block.compiled(), namespace)
            except Exception:
                pytest.fail(
                    f"the block at {block.where()} raised:\n{traceback.format_exc()}", pytrace=False
                )
        for name, function in list(namespace.items()):
            if not (name.startswith("test_") and inspect.isfunction(function)):
                continue
            wanted = inspect.signature(function).parameters
            try:
                function(**{p: fixtures[p] for p in wanted})
            except Exception:
                where = f"{path.relative_to(ROOT)}:{function.__code__.co_firstlineno}"
                pytest.fail(f"{name} at {where} failed:\n{traceback.format_exc()}", pytrace=False)
