"""Test fixtures: one SparkSession for the whole run (classic, or Spark Connect when
DQ_TEST_SPARK_CONNECT=1), and helpers to build small DataFrames."""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Iterator
from contextlib import nullcontext

import pytest
from pyspark.sql import DataFrame, SparkSession

from checkers.jdbc_drivers import driver_jars
from tests.local_connect import local_connect_port

# Python UDF workers (Python predicates) must run this interpreter, which has pandas and pyarrow.
os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
#: Tests run thousands of small jobs in short-lived JVMs: the quick JIT tier alone and the serial
#: collector spend a quarter less CPU than the server defaults (benchmarks keep the defaults).
#: The quick tier alone caps the code cache at 48 MB, which a test worker's JVM fills within
#: minutes, then evicts and recompiles: 256 MB (reserved, not used) cut the JVM's CPU on
#: tests/metrics from 308 to 256 s.
TEST_JVM_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC -XX:ReservedCodeCacheSize=256m"
# The same for every JVM the tests start in other processes: drivers of `dq` and Airflow tasks
# (spark-submit reads SPARK_SUBMIT_OPTS), Spark Connect servers, standalone masters and workers.
os.environ.setdefault("SPARK_SUBMIT_OPTS", TEST_JVM_OPTIONS)
os.environ.setdefault("SPARK_DAEMON_JAVA_OPTS", TEST_JVM_OPTIONS)
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
    "spark.driver.extraJavaOptions": TEST_JVM_OPTIONS,
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
    with local_connect_port() if CONNECT else nullcontext():
        session = builder.getOrCreate()
        yield session
        session.stop()


#: Spark's interpreted evaluation, for a module whose every DataFrame holds a few dozen rows and
#: whose plans are large (every analyzer at once): compiling generated code for each plan costs
#: more CPU there than it saves (measured: a third less on test_state_laws), while on thousands of
#: rows it costs 2-3x, so the session keeps Spark's defaults. Adaptive execution only adds
#: planning to plans this small. Results are the same either way: these are Spark's two
#: evaluation paths for one plan.
SMALL_DATA_CONFIG = {
    "spark.sql.codegen.wholeStage": "false",
    "spark.sql.codegen.factoryMode": "NO_CODEGEN",
    "spark.sql.adaptive.enabled": "false",
}


@pytest.fixture(scope="module")
def small_data_spark(spark: SparkSession) -> Iterator[SparkSession]:
    """The session with SMALL_DATA_CONFIG for one module (`pytestmark = pytest.mark.usefixtures(
    "small_data_spark")`), restored after its last test."""
    previous = {key: spark.conf.get(key, None) for key in SMALL_DATA_CONFIG}
    for key, value in SMALL_DATA_CONFIG.items():
        spark.conf.set(key, value)
    yield spark
    for key, value in previous.items():
        if value is None:
            spark.conf.unset(key)
        else:
            spark.conf.set(key, value)


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


#: Test packages and modules whose package- or module-scoped fixtures are costly (an Airflow stand,
#: a demo warehouse, a Connect server and a standalone cluster, months of partitions): under xdist
#: each runs on one worker, so its fixtures are built once. Every other test is a unit of its own,
#: so the two workers stay evenly loaded to the end (whole modules left one worker idle for
#: minutes: the classic pass took 17:46 against 15:07 with every test a unit).
ONE_WORKER = tuple(
    os.environ.get(
        "DQ_TEST_ONE_WORKER",
        "tests/dags tests/checks/examples tests/deployment/test_python_predicates.py "
        "tests/metrics/test_differential.py tests/checks/test_incremental_floor.py "
        "tests/checks/test_bad_inputs.py",
    ).split()
)  # (the variable: tests/test_worker_groups.py)


def listed(path: str, names: tuple[str, ...]) -> str | None:
    """The entry of `names` (a module, or a package) that holds the test file `path`."""
    return next((n for n in names if path == n or path.startswith(n + "/")), None)


def group_of(nodeid: str) -> str:
    """The unit a worker is handed: the whole ONE_WORKER entry holding the test, or the test."""
    return listed(nodeid.split("::", 1)[0], ONE_WORKER) or nodeid


@pytest.hookimpl(optionalhook=True)  # the xdist plugin may be off (-p no:xdist)
def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object:
    """xdist's scope scheduling over `group_of`, in collection order (HEAVY_FIRST first). Not its
    `loadgroup` marks: with pytest 9 the group xdist appends to a node id is lost, so every test
    became a unit of its own and an Airflow stand or a Connect server was built on both workers."""
    from xdist.scheduler import LoadScopeScheduling

    class ByGroup(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return group_of(nodeid)

    return ByGroup(config, log)


#: The groups that cost most (CPU seconds and waits on servers they start), handed out first so that
#: neither worker is left with a long one at the end (make test: --no-loadscope-reorder).
HEAVY_FIRST = (
    "tests/dags",
    "tests/deployment/test_python_predicates.py",
    "tests/metrics/test_state_laws.py",
    "tests/metrics/test_differential.py",
    "tests/examples/test_demo.py",
    "tests/metrics/test_suggestions.py",
    "tests/checkers/test_consistency.py",
    "tests/metrics/test_has_no_anomalies.py",
    "tests/checks/test_incremental.py",
    "tests/scheduling/test_newcomer.py",
)
#: Handed out last: it waits for the Connect pass's local server to stop (tests/local_connect.py).
LAST = ("tests/scheduling/test_cli_output.py",)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.pluginmanager.hasplugin("xdist"):
        rank = {group: i for i, group in enumerate(HEAVY_FIRST)} | {
            g: len(HEAVY_FIRST) + 1 for g in LAST
        }
        heavy = (*HEAVY_FIRST, *LAST)

        def order(item: pytest.Item) -> int:  # sorted() is stable: collection order otherwise
            return rank.get(listed(item.nodeid.split("::", 1)[0], heavy) or "", len(HEAVY_FIRST))

        items.sort(key=order)
    select_connect_pass(config, items)


def select_connect_pass(config: pytest.Config, items: list[pytest.Item]) -> None:
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
