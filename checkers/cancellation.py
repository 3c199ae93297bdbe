"""Cancelling Spark work by tag: the actions a thread starts inside `tagged(...)` carry a job tag,
and `interrupt(...)`, called from any thread (a loader at a source's deadline), cancels them and
stops their running tasks.

Spark Connect keeps tags on the client and interrupts by tag from any thread. Classic sessions
resolve `SparkSession.interruptTag` through the calling thread's own tags, so another thread's
interrupt finds nothing (tried on PySpark 4.3): there the SparkContext's literal job tags are
used instead, the one place the engine touches the SparkContext."""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

from pyspark.sql import SparkSession

#: The prefix of every tag the engine puts on Spark jobs (the UI and `dq` logs show it).
TAG_PREFIX = "dq"


def job_tag(what: str) -> str:
    """A tag unique to one piece of work, readable in the Spark UI: `dq-<id>-<what>` with
    anything but letters, digits, `.`, `_` and `-` replaced (Spark refuses commas)."""
    readable = re.sub(r"[^A-Za-z0-9._-]+", "_", what)[:60].strip("_") or "work"
    return f"{TAG_PREFIX}-{uuid.uuid4().hex[:12]}-{readable}"


def is_connect(spark: SparkSession) -> bool:
    """Whether `spark` is a Spark Connect session (without importing its client)."""
    return type(spark).__module__.startswith("pyspark.sql.connect")


@contextmanager
def tagged(spark: SparkSession | None, tag: str) -> Iterator[str]:
    """Every Spark action this thread starts inside the block carries `tag` (without a session,
    there is nothing to tag)."""
    if spark is None:
        yield tag
        return
    if is_connect(spark):
        spark.addTag(tag)
        try:
            yield tag
        finally:
            spark.removeTag(tag)
        return
    context = spark.sparkContext
    context.setInterruptOnCancel(True)  # a cancelled task's thread is interrupted, not left to end
    context.addJobTag(tag)
    try:
        yield tag
    finally:
        context.removeJobTag(tag)


def interrupt(spark: SparkSession | None, tag: str) -> None:
    """Cancel the running and waiting jobs carrying `tag`, from any thread. Work that already
    ended is not affected."""
    if spark is None:
        return
    if is_connect(spark):
        spark.interruptTag(tag)
    else:
        spark.sparkContext.cancelJobsWithTag(tag)
