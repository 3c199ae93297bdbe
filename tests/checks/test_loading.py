"""Loading sources: each distinct parser once, at most `parallelism` at a time, each within its
deadline (its parser's own or the run's); a source past it is an ERROR for every check reading it,
and an abandoned load never holds the process at exit."""

from __future__ import annotations

import datetime as dt
import logging
import os
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator

import pytest
from pyspark.sql import functions as F

from checkers import PredicateSingleDatasetChecker, Status
from checkers.parsers import CallableParser
from checks import QualityCheck
from scheduling.tick.evaluate import evaluate_checks
from scheduling.tick.sources import load_sources
from tests.conftest import CONNECT

# Sources load concurrently through one Connect client. (tests/connect_paths.py)
pytestmark = pytest.mark.connect

NOW = dt.datetime(2026, 11, 22, 12, 0, tzinfo=dt.UTC)
BOUND_S = 20.0  # generous: the deadlines below are 0.5 to 1.5 s


@pytest.fixture
def release() -> Iterator[threading.Event]:
    """Holds hanging loads until the test ends, then lets the abandoned threads finish."""
    event = threading.Event()
    yield event
    event.set()


def hanging(release: threading.Event, calls: list[str], name: str):
    def load(spark):
        calls.append(name)
        release.wait()
        return spark.range(1)

    return load


def quick(spark):
    return spark.createDataFrame([(1,), (2,), (3,)], "n int")


def check_on(parser, name: str) -> type[QualityCheck]:
    def checker(self, data):
        return PredicateSingleDatasetChecker(data, "n > 0")

    body = {"parser": parser, "checker": checker, "name": name}
    return type(name.title().replace("_", ""), (QualityCheck,), body, register=False)


def test_a_parsers_own_deadline_overrides_the_default(spark, release):
    calls: list[str] = []
    own = CallableParser(hanging(release, calls, "own"), name="own", deadline_s=0.5)
    default = CallableParser(hanging(release, calls, "default"), name="default")
    healthy = CallableParser(quick, name="healthy", deadline_s=BOUND_S)  # Spark may be cold
    started = time.monotonic()
    loaded = load_sources([own, default, healthy], spark, deadline_s=1.5)
    assert time.monotonic() - started < BOUND_S
    assert loaded[own].error == "own timed out after 0.5 s"
    assert loaded[default].error == "default timed out after 1.5 s"
    assert loaded[own].frame is None and loaded[default].frame is None
    assert loaded[healthy].error is None and loaded[healthy].frame.columns == ["n"]
    assert sorted(calls) == ["default", "own"]


def test_two_checks_on_one_slow_source_share_one_load_and_both_error(spark, release):
    calls: list[str] = []
    slow = CallableParser(hanging(release, calls, "slow"), name="slow feed")
    checks = [
        check_on(slow, "first_on_slow"),
        check_on(CallableParser(quick, name="numbers", deadline_s=BOUND_S), "healthy"),
        check_on(slow, "second_on_slow"),
    ]
    started = time.monotonic()
    first, healthy, second = evaluate_checks(checks, spark=spark, now=NOW, deadline_s=1)
    assert time.monotonic() - started < BOUND_S
    assert calls == ["slow"]  # one load for both checks
    for outcome in (first, second):
        assert outcome.status is Status.ERROR
        assert outcome.error == "slow feed timed out after 1 s"
        assert outcome.timings["load_s"] >= 1.0  # waited for the deadline, no longer counted
    assert healthy.status is Status.PASSED and healthy.total == 3
    assert healthy.timings["load_s"] < first.timings["load_s"]


class _InFlight:
    """Counts loads in progress; the first ones wait until `wanted` were in flight together (or a
    bound passes), so a loader running fewer at once is seen, and one running more too."""

    def __init__(self, wanted: int) -> None:
        self.wanted, self.now, self.most = wanted, 0, 0
        self.changed = threading.Condition()

    def source(self, n: int) -> CallableParser:
        def load(spark):
            with self.changed:
                self.now += 1
                self.most = max(self.most, self.now)
                self.changed.notify_all()
                self.changed.wait_for(lambda: self.most >= self.wanted, timeout=BOUND_S)
                self.now -= 1  # before the load returns, so the next cannot start earlier
            return spark.range(n)

        return CallableParser(load, name=f"source {n}")


@pytest.mark.parametrize("parallelism", [1, 2, 4])
def test_loads_run_concurrently_up_to_the_parallelism(spark, parallelism):
    meter = _InFlight(parallelism)
    sources = [meter.source(n) for n in range(1, 5)]
    started = time.monotonic()
    loaded = load_sources(sources, spark, deadline_s=60, parallelism=parallelism)
    assert meter.most == parallelism  # that many at once (never more: see the test below)
    assert time.monotonic() - started < BOUND_S  # nobody waited for the bound
    assert all(loaded[s].error is None and loaded[s].frame is not None for s in sources)


def test_a_source_starts_only_when_a_slot_frees(spark, release):
    # Four hung sources, two slots: the third and fourth start when the first two time out.
    calls: list[str] = []
    sources = [CallableParser(hanging(release, calls, str(n)), name=f"hung {n}") for n in range(4)]
    loaded = load_sources(sources, spark, deadline_s=1, parallelism=2)
    started = sorted(loaded[s].started for s in sources)
    assert started[2] - started[0] >= 1.0 and started[3] - started[1] >= 1.0
    assert all(loaded[s].error == f"hung {n} timed out after 1 s" for n, s in enumerate(sources))
    assert sorted(calls) == ["0", "1", "2", "3"]


def test_parallelism_must_be_positive(spark):
    with pytest.raises(ValueError, match="parallelism"):
        load_sources([CallableParser(quick)], spark, deadline_s=1, parallelism=0)


def test_a_hung_source_does_not_hold_the_process_at_exit():
    # Pool worker threads are joined at interpreter exit; a load that never returns would keep
    # the process alive for good. No Spark needed: the hung parser never touches the session.
    script = textwrap.dedent(
        """
        import threading
        from checkers.parsers import CallableParser
        from scheduling.tick.sources import load_sources

        stuck = CallableParser(lambda spark: threading.Event().wait(), name="stuck", deadline_s=0.5)
        print(load_sources([stuck], None, deadline_s=60)[stuck].error, flush=True)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=BOUND_S * 3
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "stuck timed out after 0.5 s"


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("DQ_SOURCE_DEADLINE_S", "soon"),
        ("DQ_SOURCE_DEADLINE_S", "inf"),
        ("DQ_LOAD_PARALLELISM", "0"),
    ],
)
def test_bad_load_settings_name_the_variable(tmp_path, monkeypatch, variable, value):
    from scheduling.settings import Settings

    monkeypatch.setenv("DQ_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("DQ_CONFIG", str(tmp_path / "none.toml"))
    monkeypatch.setenv(variable, value)
    with pytest.raises(ValueError, match=variable):
        Settings.from_environment(database_url=f"sqlite:///{tmp_path / 'dq.db'}")


# in the Spark Connect pass too (the module is marked): what a server does with the interrupt
def test_a_late_sources_task_is_stopped_and_a_healthy_source_loads(spark, tmp_path, caplog):
    """A source whose Spark task hangs past its deadline is timed out and its task stopped: its
    Python worker ends and the task never returns. A healthy source whose task runs across the
    interrupt loads all the same: over Spark Connect the interrupt reaches only the late load's
    tag; on classic Spark it stops every job of the session (the only way to reach another
    thread's job), and the healthy load, stopped by the way, starts again and succeeds."""
    pid_file, release = tmp_path / "stuck.pid", tmp_path / "release"

    def running(pid: int) -> bool:  # a closure, so the UDF below ships it by value
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True

    @F.udf("long")
    def stuck(n):  # the fault: an idle task that runs until the test releases it
        pid_file.with_suffix(".tmp").write_text(str(os.getpid()))
        pid_file.with_suffix(".tmp").replace(pid_file)
        bound = time.monotonic() + 120  # polls the release file (another process), bounded
        while not release.exists() and time.monotonic() < bound:
            time.sleep(0.05)
        return n

    @F.udf("boolean")
    def outlives_stuck(n):  # a healthy task running while the stuck one is interrupted
        bound = time.monotonic() + 60
        while time.monotonic() < bound:
            if pid_file.exists() and not running(int(pid_file.read_text())):
                return True
            time.sleep(0.05)
        return False

    outlived: list[bool] = []
    healthy_attempts: list[int] = []

    def group(name: str) -> None:  # classic: the test finds each load's jobs by their group
        if not CONNECT:
            spark.sparkContext.setJobGroup(name, name)

    def load_stuck(spark):
        group("stuck")
        spark.range(1).select(stuck("id")).collect()
        return spark.range(1)

    def load_healthy(spark):  # its task spans the interrupt
        healthy_attempts.append(1)
        group(f"healthy {len(healthy_attempts)}")
        outlived.extend(row[0] for row in spark.range(1).select(outlives_stuck("id")).collect())
        return spark.range(3)

    # Python workers started (and kept for reuse) beforehand, so the stuck task starts well
    # within its deadline on a busy machine.
    spark.range(0, 2, 1, 2).select(F.udf(lambda n: n, "long")("id")).collect()
    late = CallableParser(load_stuck, name="stuck job", deadline_s=8)
    healthy = CallableParser(load_healthy, name="healthy", deadline_s=90)
    try:
        with caplog.at_level(logging.INFO, logger="scheduling.tick.sources"):
            loaded = load_sources([late, healthy], spark, deadline_s=60)
        assert loaded[late].error == "stuck job timed out after 8 s"
        assert loaded[healthy].error is None and loaded[healthy].frame.count() == 3
        assert outlived == [True]  # the healthy task saw the stuck one end, and finished
        assert not running(int(pid_file.read_text()))  # killed, not back in the pool
        interrupted = [r.getMessage() for r in caplog.records if "interrupted" in r.getMessage()]
        if CONNECT:  # the late operation alone, by its tag: the healthy one ran through
            assert interrupted and interrupted[0].startswith("interrupted 1 Spark operation(s)")
            assert len(healthy_attempts) == 1
        else:  # both jobs of the session; the healthy load started again
            assert interrupted[0].startswith("interrupted 2 Spark operation(s) of the session")
            tracker = spark.sparkContext.statusTracker()  # the test's own view of the jobs
            status = {
                name: [tracker.getJobInfo(job).status for job in tracker.getJobIdsForGroup(name)]
                for name in ("stuck", "healthy 1", "healthy 2")
            }
            assert status == {
                "stuck": ["FAILED"],
                "healthy 1": ["FAILED"],
                "healthy 2": ["SUCCEEDED"],
            }
            assert interrupted[1] == (
                "healthy: its Spark job was interrupted with a late source's; loading again"
            )
            assert len(healthy_attempts) == 2
    finally:
        release.touch()
