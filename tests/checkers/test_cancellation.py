"""Tags and interrupts through the session's API: what an interrupt from another thread than the
tagged one reaches, over Spark Connect and on classic Spark (checkers.cancellation)."""

from __future__ import annotations

import contextlib
import threading
import time

import pytest
from pyspark.sql import functions as F

from checkers.cancellation import TAG_PREFIX, interrupt, interrupt_session, job_tag, tagged
from tests.conftest import CONNECT
from tests.polling import wait_for

# What an interrupt reaches differs over Spark Connect. (tests/connect_paths.py)
pytestmark = pytest.mark.connect


def test_a_job_tag_is_unique_and_readable():
    first, second = job_tag("orders, daily"), job_tag("orders, daily")
    assert first != second
    assert first.startswith(f"{TAG_PREFIX}-") and first.endswith("-orders_daily")
    assert "," not in first  # Spark refuses commas in tags


def test_an_interrupt_from_another_thread_reaches_the_tag_over_connect_only(spark, tmp_path):
    """Over Spark Connect the server finds the tagged operation whatever thread asks. A classic
    session finds nothing from another thread, even one holding the same tag: that thread's tag
    stands for another job tag (so a classic late load is reached through the session instead:
    the test below). The day classic reaches it, that detour can go."""
    tag = job_tag("waiting")
    wait_started, release, ended, worker = _waiting_work(spark, tmp_path, tag)
    try:
        wait_started()
        with tagged(spark, tag):  # the same tag on this thread too
            stopped = interrupt(spark, tag)
        assert len(stopped) == (1 if CONNECT else 0)
    finally:
        release()
        worker.join(60)
    assert ended == ["interrupted" if CONNECT else "finished"]


def _waiting_work(spark, tmp_path, tag=None):
    """A job in another thread (under `tag`, if given) whose one task runs until released or
    interrupted: (wait until it started, release it, the list its end is appended to, the
    thread)."""
    started, release = tmp_path / "started", tmp_path / "release"

    @F.udf("long")
    def waits(n):  # polls the release file (another process) for at most 120 s
        started.touch()
        bound = time.monotonic() + 120
        while not release.exists() and time.monotonic() < bound:
            time.sleep(0.05)
        return n

    ended: list[str] = []

    def work() -> None:
        try:
            with tagged(spark, tag) if tag else contextlib.nullcontext():
                spark.range(1).select(waits("id")).collect()
            ended.append("finished")
        except Exception:
            ended.append("interrupted")

    worker = threading.Thread(target=work, daemon=True)
    worker.start()
    return (lambda: wait_for(started.exists, "the task to start")), release.touch, ended, worker


def test_an_interrupt_of_the_session_reaches_another_threads_job(spark, tmp_path):
    """What classic Spark can reach from another thread through the session's API: every running
    job of the session (over Spark Connect too)."""
    wait_started, release, ended, worker = _waiting_work(spark, tmp_path)
    try:
        wait_started()
        stopped = interrupt_session(spark)
        worker.join(60)
    finally:
        release()
        worker.join(60)
    assert len(stopped) == 1
    assert ended == ["interrupted"]
    assert interrupt_session(None) == []
