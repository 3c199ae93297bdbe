"""Test fixtures: one SparkSession for the whole run (classic, or Spark Connect when
DQ_TEST_SPARK_CONNECT=1), and helpers to build small DataFrames."""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Iterator

import pytest
from pyspark.sql import DataFrame, SparkSession

from checkers.jdbc_drivers import driver_jars

# Python UDF workers (Python predicates) must run this interpreter, which has pandas and pyarrow.
os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
POSTGRES_URL = os.environ.get(
    "DQ_TEST_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test"
)
MARIADB_URL = os.environ.get("DQ_TEST_MARIADB_URL", "mysql+pymysql://root@127.0.0.1:3306/test")
CONNECT = os.environ.get("DQ_TEST_SPARK_CONNECT") == "1"
TEST_CONFIG = {
    "spark.ui.enabled": "false",
    "spark.sql.shuffle.partitions": "2",
    "spark.default.parallelism": "2",
    "spark.sql.session.timeZone": "UTC",
    "spark.driver.memory": "2g",
    "spark.ui.showConsoleProgress": "false",
    # JDBC drivers installed from Debian (a local Connect server takes them from here too).
    **({"spark.jars": ",".join(jars)} if (jars := driver_jars()) else {}),
}


@pytest.fixture(scope="session")
def spark() -> Iterator[SparkSession]:
    # Expected analysis errors (bad filters in tests) are reported as metrics; keep logs quiet.
    logging.getLogger("SQLQueryContextLogger").setLevel(logging.CRITICAL)
    builder = SparkSession.builder.appName("dq-checkers-tests")
    builder = builder.remote("local[2]") if CONNECT else builder.master("local[2]")
    for key, value in TEST_CONFIG.items():
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    yield session
    session.stop()


@pytest.fixture
def make_df(spark: SparkSession):
    """`make_df(rows, "a int, b string")` -> DataFrame."""

    def build(rows: list[tuple[object, ...]], schema: str) -> DataFrame:
        return spark.createDataFrame(rows, schema)

    return build


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--connect-audit",
        action="store_true",
        help="(Spark Connect pass) fail unless the tests called every function of "
        "tests/connect_paths.py OVER_CONNECT",
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The Spark Connect pass runs the tests marked `connect` (the Makefile selects them) that
    use the Spark session: the others do not depend on how Spark is reached, and ran in the
    classic pass already. A `connect_only` test needs the Connect pass's server: the classic pass
    deselects it (it is not skipped)."""
    if not CONNECT:
        only = [i for i in items if i.get_closest_marker("connect_only")]
        if only:
            config.hook.pytest_deselected(items=only)
            items[:] = [i for i in items if not i.get_closest_marker("connect_only")]
        return
    kept = [i for i in items if "spark" in getattr(i, "fixturenames", ())]
    dropped = [i for i in items if "spark" not in getattr(i, "fixturenames", ())]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept
    if config.getoption("--connect-audit"):
        from tests.connect_paths import OVER_CONNECT, watch

        called: set[str] = set()
        watch(list(OVER_CONNECT), called)
        config.stash[_CALLED] = called


_CALLED = pytest.StashKey[set[str]]()


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    called = session.config.stash.get(_CALLED, None)
    if called is None or exitstatus != 0:
        return
    from tests.connect_paths import OVER_CONNECT

    missed = sorted(set(OVER_CONNECT) - called)
    if missed:
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        message = (
            "connect audit: no `connect` test called these Connect-specific functions "
            f"(tests/connect_paths.py): {missed}"
        )
        if reporter is not None:
            reporter.write_line(message, red=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
