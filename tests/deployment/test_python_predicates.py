"""Python predicates off the laptop: a real Spark Connect server started from the pyspark
wheel's own script, and a real standalone master with two workers, run checks whose Python
predicates live in a package the test writes to a directory on the client's path only. The
counts equal a local run's; a predicate needing a module the executors cannot import is an ERROR
naming it, and so is the doctor's executors finding. The executors' Python, everywhere, is a bare
virtual environment holding exactly the packages docs/deployment.md lists (bare_python.py).

Each server runs only while its client runs (one Spark process group at a time). The clients run
in subprocesses: a classic driver and a Connect client cannot join this process's classic session.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pyspark
import pytest

from tests.conftest import TEST_JVM_OPTIONS
from tests.dags.spark_events import EventLogs
from tests.deployment.bare_python import DOCUMENTED, bare_venv
from tests.deployment.client import RESULT_MARK
from tests.polling import wait_for

# A Spark Connect server and a standalone cluster started from the wheel. `make test-fast` skips it.
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
SPARK_HOME = Path(pyspark.__file__).parent
START_TIMEOUT_S = 180.0
CLIENT_TIMEOUT_S = 420.0

RULES = """
import datetime as dt

from pyspark.sql import functions as F

from checkers import LessThan, PredicateDoubleDatasetsChecker, PredicateSingleDatasetChecker
from checkers.parsers import CallableParser
from checks import QualityCheck
from scheduling import Every


def numbers(spark):
    return spark.range(0, 1000, numPartitions=2).select(F.col("id").cast("int").alias("n"))


NUMBERS = CallableParser(numbers, name="numbers")


def not_a_multiple_of_seven(row):
    return row["n"] % 7 != 0


def same_parity(left, right):
    return left["v"] % 2 == right["v"] % 2


class NotMultiplesOfSeven(QualityCheck):
    parser = NUMBERS
    clock = Every(dt.timedelta(minutes=15))
    tolerance = LessThan(1000)  # tolerated: counted, with no sample to fetch

    def checker(self, data):
        return PredicateSingleDatasetChecker(data, not_a_multiple_of_seven, key="n")


class SameParity(QualityCheck):
    parser = NUMBERS
    tolerance = LessThan(1000)

    def checker(self, data):
        left = data.select("n", F.col("n").alias("v"))
        right = data.select("n", (F.col("n") + (F.col("n") % 5 == 0).cast("int")).alias("v"))
        return PredicateDoubleDatasetsChecker(left, right, same_parity, on="n")
"""
NEEDS_HELPERS = """
import teamhelpers
from checkers import LessThan, PredicateSingleDatasetChecker
from checkers.parsers import CallableParser
from checks import QualityCheck
from teamchecks.rules import numbers


class NeedsHelpers(QualityCheck):
    parser = CallableParser(numbers, name="more numbers")  # its own pass: others stay shared
    tolerance = LessThan(1000)

    def checker(self, data):
        return PredicateSingleDatasetChecker(data, teamhelpers.below_900)
"""
HELPERS = """
def below_900(row):
    return row["n"] < 900
"""
GOOD = {"not_multiples_of_seven": (143, 1000), "same_parity": (200, 1000)}


@pytest.fixture(scope="module")
def executors_python(tmp_path_factory) -> str:
    """The executors' Python: exactly the documented packages (and what they require)."""
    return str(bare_venv(tmp_path_factory.mktemp("executors") / "venv"))


def test_the_executors_python_holds_exactly_the_documented_packages(executors_python) -> None:
    needs = (ROOT / "docs" / "deployment.md").read_text().split("## What dq-checkers ships")[0]
    assert all(name in needs for name in DOCUMENTED)  # the list the page gives
    probe = (
        "import importlib.util as u, sys; print([u.find_spec(m) is not None for m in sys.argv[1:]])"
    )
    modules = ["pandas", "pyarrow", "sqlalchemy", "croniter", "datasketches"]
    modules += ["pyspark", "slack_sdk", "rich", "airflow", "checkers"]  # not installed there
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run(
        [executors_python, "-c", probe, *modules],
        cwd=Path(executors_python).parent,  # off the repository
        env=env,
        capture_output=True,
        text=True,
    )
    assert done.stdout.strip() == str([True] * 5 + [False] * 5), done.stderr


@pytest.fixture(scope="module")
def client_path(tmp_path_factory) -> str:
    """The team's package `teamchecks` and a helper module outside it, on the client's path."""
    top = tmp_path_factory.mktemp("client")
    package = top / "team" / "teamchecks"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "rules.py").write_text(textwrap.dedent(RULES))
    (package / "needs_helpers.py").write_text(textwrap.dedent(NEEDS_HELPERS))
    (top / "helpers").mkdir()
    (top / "helpers" / "teamhelpers.py").write_text(textwrap.dedent(HELPERS))
    return os.pathsep.join([str(top / "team"), str(top / "helpers"), str(ROOT)])


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _server_env(directory: Path, python: str) -> dict[str, str]:
    """The servers' environment: `python` for the executors, nothing of the client's path."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "DQ_CHECKS")}
    env.update(
        SPARK_HOME=str(SPARK_HOME),
        SPARK_LOG_DIR=str(directory / "logs"),
        SPARK_PID_DIR=str(directory / "pids"),
        SPARK_LOCAL_IP="127.0.0.1",
        SPARK_MASTER_OPTS="-Dspark.master.rest.enabled=false",
        PYSPARK_PYTHON=python,
    )
    env.pop("SPARK_CONNECT_MODE_ENABLED", None)
    return env


@contextmanager
def _processes(commands: list[tuple[list[str], dict[str, str]]], directory: Path) -> Iterator[None]:
    """Start each command in its own process group (cwd: `directory`, off the client's path);
    stop them all, in reverse, on the way out."""
    started: list[subprocess.Popen[bytes]] = []
    try:
        for n, (command, env) in enumerate(commands):
            log = open(directory / f"process-{n}.log", "wb")  # noqa: SIM115
            started.append(
                subprocess.Popen(
                    command,
                    cwd=directory,
                    env=env,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                )
            )
            log.close()
        yield
    finally:
        for process in reversed(started):
            _signal_group(process, signal.SIGTERM)
        for process in reversed(started):
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                _signal_group(process, signal.SIGKILL)
                process.wait()


def _signal_group(process: subprocess.Popen[bytes], signum: int) -> None:
    """The process and what it started (a worker's executors, the server's JVM)."""
    with contextlib.suppress(ProcessLookupError):  # already gone
        os.killpg(process.pid, signum)


def _listening(port: int) -> bool:
    with socket.socket() as connection:
        return connection.connect_ex(("127.0.0.1", port)) == 0


def _alive_workers(ui_port: int) -> int:
    """Workers the master counts; 0 until its UI answers the JSON page.

    While it starts, the master's UI can serve its HTML front page for ``/json/``
    (the JSON handler is not attached yet): that is "not ready", not an error.
    """
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{ui_port}/json/", timeout=5) as answer:
            return int(json.load(answer)["aliveworkers"])
    except (OSError, ValueError, KeyError):
        return 0


def _run_client(
    targets: list[str], client_path: str, directory: Path, python: str
) -> dict[str, dict]:
    """The client's results; `python` the executors' (of local masters and of the cluster)."""
    env = {**os.environ, "PYTHONPATH": client_path, "DQ_CHECKS": "teamchecks"}
    env.update(PYSPARK_PYTHON=python, SPARK_LOCAL_IP="127.0.0.1")
    # A task that cannot import its module fails the same way every time: no retries.
    submit = "--conf spark.task.maxFailures=1"
    # the cluster's executors
    submit += f" --conf spark.executor.extraJavaOptions='{TEST_JVM_OPTIONS}'"
    env["PYSPARK_SUBMIT_ARGS"] = f"{submit} pyspark-shell"
    env.pop("SPARK_CONNECT_MODE_ENABLED", None)
    done = subprocess.run(
        [sys.executable, "-m", "tests.deployment.client", *targets],
        cwd=directory,
        env=env,
        capture_output=True,
        text=True,
        timeout=CLIENT_TIMEOUT_S,
    )
    lines = [line for line in done.stdout.splitlines() if line.startswith(RESULT_MARK)]
    assert done.returncode == 0 and lines, done.stdout[-3000:] + done.stderr[-3000:]
    runs: dict[str, dict] = json.loads(lines[-1].removeprefix(RESULT_MARK))
    for target, run in runs.items():
        print(f"{target}: {json.dumps(run['timings'])}")  # seen with -s, or when a test fails
    return runs


TICK = """
import datetime as dt, json
from checks.registry import discover_all
from scheduling.runner import run_window
end = dt.datetime(2026, 11, 22, 7, tzinfo=dt.UTC)
names = sorted(discover_all("teamchecks").checks)
run = run_window(names, start=end - dt.timedelta(minutes=15), end=end)
print(json.dumps({n: o.status.value for n, o in run.results.items()}))
"""


def _run_tick(target: str, client_path: str, directory: Path) -> dict[str, object]:
    """The Airflow tick's run path (`run_window`, as the DAG's evaluate task calls it) with
    DQ_SPARK_REMOTE set, and the Spark applications its process started (event logs)."""
    events = EventLogs.create(directory / "tick")
    env = {**os.environ, "PYTHONPATH": client_path, "DQ_CHECKS": "teamchecks", **events.env()}
    env.update(DQ_SPARK_REMOTE=target, PYSPARK_PYTHON=sys.executable)
    env.update(DQ_DATABASE_URL=f"sqlite:///{directory / 'dq.db'}", DQ_STATE_DIR=str(directory))
    env.update(DQ_CONFIG=str(directory / "none.toml"))
    env.pop("SPARK_CONNECT_MODE_ENABLED", None)
    done = subprocess.run(
        [sys.executable, "-c", TICK],
        cwd=directory,
        env=env,
        capture_output=True,
        text=True,
        timeout=CLIENT_TIMEOUT_S,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    statuses = json.loads(done.stdout.splitlines()[-1])
    return {"statuses": statuses, "applications": len(events.applications())}


@pytest.fixture(scope="module")
def connect_run(client_path, executors_python, tmp_path_factory) -> dict[str, dict]:
    """The client's results on a Spark Connect server started by the wheel's own script."""
    directory = tmp_path_factory.mktemp("connect")
    port = _free_port()
    command = [
        str(SPARK_HOME / "sbin" / "start-connect-server.sh"),
        "--wait",
        "--master",
        "local[2]",
        "--conf",
        f"spark.connect.grpc.binding.port={port}",
        "--conf",
        "spark.connect.grpc.binding.address=127.0.0.1",
        "--conf",
        "spark.ui.enabled=false",
        "--conf",
        "spark.sql.shuffle.partitions=4",  # a small server (the default, 200, is for clusters)
    ]
    started = time.perf_counter()
    with _processes([(command, _server_env(directory, executors_python))], directory):
        wait_for(lambda: _listening(port), "the Spark Connect server", timeout=START_TIMEOUT_S)
        print(f"Connect server ready after {time.perf_counter() - started:.1f} s")
        target = f"sc://127.0.0.1:{port}"
        run = _run_client([target], client_path, directory, executors_python)[target]
        run["tick"] = _run_tick(target, client_path, directory)
        return run


@pytest.fixture(scope="module")
def cluster_runs(client_path, executors_python, tmp_path_factory) -> dict[str, dict]:
    """The client's results on local[2], then on a standalone master with two workers."""
    directory = tmp_path_factory.mktemp("standalone")
    env = _server_env(directory, executors_python)
    master_port, ui_port = _free_port(), _free_port()
    master = f"spark://127.0.0.1:{master_port}"
    spark_class = str(SPARK_HOME / "bin" / "spark-class")
    master_command = [spark_class, "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1"]
    master_command += ["--port", str(master_port), "--webui-port", str(ui_port)]
    commands = [(master_command, env)]
    for n in (1, 2):
        work = directory / f"worker-{n}"
        work.mkdir()
        worker = [spark_class, "org.apache.spark.deploy.worker.Worker", master]
        worker += ["--host", "127.0.0.1", "--webui-port", str(_free_port())]
        worker += ["--cores", "1", "--memory", "1g", "--work-dir", str(work)]
        commands.append((worker, {**env, "SPARK_WORKER_DIR": str(work)}))
    started = time.perf_counter()
    with _processes(commands, directory):
        wait_for(lambda: _alive_workers(ui_port) == 2, "two workers", timeout=START_TIMEOUT_S)
        print(f"master and two workers ready after {time.perf_counter() - started:.1f} s")
        return _run_client(["local[2]", master], client_path, directory, executors_python)


def _counts(run: dict[str, dict]) -> dict[str, tuple[str, int, int]]:
    return {
        name: (o["status"], o["failing"], o["total"])
        for name, o in run["outcomes"].items()
        if name in GOOD
    }


def test_local_run_counts(cluster_runs) -> None:
    local = cluster_runs["local[2]"]
    assert _counts(local) == {name: ("tolerated", *counts) for name, counts in GOOD.items()}
    assert local["outcomes"]["needs_helpers"]["failing"] == 100  # the client imports it
    assert all(f["ok"] for f in local["doctor"].values()), local["doctor"]


def test_spark_connect_counts_equal_local(connect_run, cluster_runs) -> None:
    assert _counts(connect_run) == _counts(cluster_runs["local[2]"])


def test_a_tick_on_a_connect_server_starts_no_spark_application(connect_run) -> None:
    tick = connect_run["tick"]
    assert {n: tick["statuses"][n] for n in GOOD} == dict.fromkeys(GOOD, "tolerated")
    assert tick["applications"] == 0  # the driver is the server's


def _on_cluster(cluster_runs: dict[str, dict]) -> dict[str, dict]:
    return next(run for target, run in cluster_runs.items() if target.startswith("spark://"))


def test_standalone_cluster_counts_equal_local(cluster_runs) -> None:
    assert _counts(_on_cluster(cluster_runs)) == _counts(cluster_runs["local[2]"])


@pytest.mark.parametrize("where", ["connect", "standalone"])
def test_a_module_the_executors_cannot_import_is_an_error_naming_it(
    where, connect_run, cluster_runs
) -> None:
    run = connect_run if where == "connect" else _on_cluster(cluster_runs)
    outcome = run["outcomes"]["needs_helpers"]
    assert outcome["status"] == "error", outcome
    assert "No module named 'teamhelpers'" in outcome["error"]
    assert "The executors' Python cannot import 'teamhelpers'" in outcome["error"]
    assert "DQ_CHECKS" in outcome["error"]


def test_doctor_names_the_module_the_executors_cannot_import(connect_run) -> None:
    doctor = connect_run["doctor"]
    assert doctor["spark"]["ok"], doctor
    assert not doctor["executors"]["ok"]
    line = doctor["executors"]["line"]
    assert line.startswith("FAIL executors: Python 3.")
    assert "teamchecks.needs_helpers: ModuleNotFoundError: No module named 'teamhelpers'" in line
