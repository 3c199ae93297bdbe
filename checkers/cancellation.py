"""Cancelling Spark work: the actions a thread starts inside `tagged(...)` carry a tag
(`SparkSession.addTag`); `interrupt(...)` interrupts them by that tag (`interruptTag`) and
`interrupt_session(...)` interrupts every running operation of the session (`interruptAll`).

Only the session's API is used, so the code is the same on classic Spark and on Spark Connect.
They differ in what an interrupt by tag from another thread reaches: a Spark Connect server
interrupts every operation of the session carrying the tag, whatever client thread started it. A
classic session (Spark 4) turns the tag into a job tag holding a random id of the thread that
added it, and `interruptTag` looks the tag up among the calling thread's own, so another
thread's interrupt by tag finds nothing (adding the same tag there first makes a different job
tag). On classic Spark, work blocked on another thread is reached only through the session's
own job tag: `interrupt_session`, which stops that session's other work too (the loader restarts
the loads it stopped by the way: scheduling.tick.sources)."""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

from pyspark.sql import SparkSession

#: The prefix of every tag the engine puts on Spark work (the UI and `dq` logs show it).
TAG_PREFIX = "dq"


def job_tag(what: str) -> str:
    """A tag unique to one piece of work, readable in the Spark UI: `dq-<id>-<what>` with
    anything but letters, digits, `.`, `_` and `-` replaced (Spark refuses commas)."""
    readable = re.sub(r"[^A-Za-z0-9._-]+", "_", what)[:60].strip("_") or "work"
    return f"{TAG_PREFIX}-{uuid.uuid4().hex[:12]}-{readable}"


@contextmanager
def tagged(spark: SparkSession | None, tag: str) -> Iterator[str]:
    """Every Spark action this thread starts inside the block carries `tag` (without a session,
    there is nothing to tag)."""
    if spark is None:
        yield tag
        return
    spark.addTag(tag)
    try:
        yield tag
    finally:
        spark.removeTag(tag)


def interrupt(spark: SparkSession | None, tag: str) -> list[str]:
    """Interrupt the running operations carrying `tag` (see the module's note on classic
    sessions); the operations stopped. Work that already ended is not affected."""
    if spark is None:
        return []
    return list(spark.interruptTag(tag))


def interrupt_session(spark: SparkSession | None) -> list[str]:
    """Interrupt every running operation of the session, whatever thread started it; the
    operations stopped (on classic Spark, their SQL execution ids)."""
    if spark is None:
        return []
    return list(spark.interruptAll())
