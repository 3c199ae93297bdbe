"""Tags and interrupts through the session's API: what an interrupt from another thread than the
tagged one reaches, over Spark Connect and on classic Spark (checkers.cancellation)."""

from __future__ import annotations

import threading
import time

import pytest
from pyspark.sql import functions as F

from checkers.cancellation import TAG_PREFIX, interrupt, job_tag, tagged
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
    stands for another job tag. The day classic reaches it, late classic loads can be cancelled."""
    started, release = tmp_path / "started", tmp_path / "release"

    @F.udf("long")
    def waits(n):  # a task that runs until released (or interrupted)
        started.touch()
        while not release.exists():
            time.sleep(0.05)
        return n

    tag, ended = job_tag("waiting"), []

    def work() -> None:
        try:
            with tagged(spark, tag):
                spark.range(1).select(waits("id")).collect()
            ended.append("finished")
        except Exception:
            ended.append("interrupted")

    worker = threading.Thread(target=work, daemon=True)
    worker.start()
    try:
        wait_for(started.exists, "the tagged task to start")
        with tagged(spark, tag):  # the same tag on this thread too
            stopped = interrupt(spark, tag)
        assert len(stopped) == (1 if CONNECT else 0)
    finally:
        release.touch()
        worker.join(60)
    assert ended == ["interrupted" if CONNECT else "finished"]
