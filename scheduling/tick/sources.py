"""Loading a tick's sources: each distinct parser once, a few at a time, each within its
deadline. A source past its deadline is reported as timed out, its Spark operations are
interrupted and its thread is abandoned: no check waits.

Over Spark Connect the late load's operations are interrupted by the tag it runs under. A
classic session cannot reach another thread's tag (checkers.cancellation), so there the whole
session's running jobs are interrupted, and the other loads that lose a job that way start
again, within what is left of their own deadlines."""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from checkers.cancellation import interrupt, interrupt_session, job_tag, tagged
from checkers.deadlines import timed_out, within
from checkers.shipping import is_connect

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from checkers.parsers import Parser

log = logging.getLogger(__name__)

#: Sources loading at once unless settings (`DQ_LOAD_PARALLELISM`) say otherwise.
DEFAULT_PARALLELISM = 4


@dataclass(frozen=True)
class Loaded:
    """A source's DataFrame or the reason there is none, and when its load started and ended
    (monotonic seconds)."""

    frame: DataFrame | None
    error: str | None
    started: float
    finished: float


def deadline_of(parser: Parser, default_s: float) -> float:
    """The parser's own deadline, else the run's."""
    own = getattr(parser, "deadline_s", None)
    return float(own) if own is not None else default_s


def _what(parser: Parser) -> str:
    try:
        return parser.describe()
    except Exception:
        return type(parser).__name__


def _describe(exc: Exception) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


class _Interrupts:
    """The session-wide interrupts of one `load_sources` (classic Spark): how many so far, and
    the late loads they were for. A load whose attempt saw one and was not one of those lost its
    job by the way, and starts again."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.count = 0
        self._late: set[str] = set()

    def stop_session(self, spark: SparkSession, tag: str) -> list[str]:
        with self._lock:  # counted first: a load failing from this interrupt must see it
            self.count += 1
            self._late.add(tag)
        return interrupt_session(spark)

    def hit_by_the_way(self, seen: int, tag: str) -> bool:
        with self._lock:
            return self.count != seen and tag not in self._late


def _load(
    parser: Parser,
    spark: SparkSession,
    seconds: float,
    tag: str,
    done: queue.SimpleQueue[tuple[Parser, Loaded]],
    interrupts: _Interrupts,
) -> None:
    from checkers.parsers import SourceError

    started = time.monotonic()
    while True:
        seen = interrupts.count
        try:
            with within(started + seconds - time.monotonic()), tagged(spark, tag):
                frame = parser.load(spark)
            done.put((parser, Loaded(frame, None, started, time.monotonic())))
            return
        except Exception as exc:
            if interrupts.hit_by_the_way(seen, tag) and time.monotonic() < started + seconds:
                log.info("%s: its Spark job was interrupted with a late source's; loading again",
                         _what(parser))
                continue
            error = str(exc) if isinstance(exc, SourceError) else _describe(exc)
            done.put((parser, Loaded(None, error, started, time.monotonic())))
            return


def _cancel(spark: SparkSession | None, tag: str, interrupts: _Interrupts) -> None:
    """A late load's Spark operations interrupted: by its tag over Spark Connect, on classic
    Spark with every running job of the session (the loads stopped by the way start again). A
    failure to interrupt is logged, the run goes on (the late result is dropped either way)."""
    if spark is None:
        return
    try:
        if is_connect(spark):
            stopped = interrupt(spark, tag)
            if stopped:
                log.info("interrupted %d Spark operation(s) tagged %s", len(stopped), tag)
        else:
            stopped = interrupts.stop_session(spark, tag)
            if stopped:
                log.info(
                    "interrupted %d Spark operation(s) of the session for the late load tagged"
                    " %s (SQL executions %s; the other loads they stopped start again)",
                    len(stopped),
                    tag,
                    ", ".join(stopped),
                )
    except Exception as exc:
        log.warning("cancelling the Spark jobs tagged %s failed: %s", tag, _describe(exc))


def load_sources(
    parsers: Iterable[Parser],
    spark: SparkSession,
    *,
    deadline_s: float,
    parallelism: int = DEFAULT_PARALLELISM,
) -> dict[Parser, Loaded]:
    """Each distinct parser loaded once, at most `parallelism` at a time, in order. A load still
    running at its deadline (`deadline_s` or the parser's own, counted from its start) becomes a
    "timed out" error and frees its slot.

    Loads run in daemon threads: Python cannot stop a thread, and a pool's worker threads would be
    joined at exit, so a hung source could hold the process. At its deadline a load's Spark jobs
    are interrupted (see the module's note); a load waiting elsewhere ends when its driver's own
    timeout (derived from the same deadline) fires; its late result is dropped."""
    if parallelism < 1:
        raise ValueError(f"parallelism must be at least 1: {parallelism}")
    waiting = deque(dict.fromkeys(parsers))
    done: queue.SimpleQueue[tuple[Parser, Loaded]] = queue.SimpleQueue()
    running: dict[Parser, tuple[float, float, str]] = {}  # parser -> (started, seconds, job tag)
    loaded: dict[Parser, Loaded] = {}
    interrupts = _Interrupts()
    while waiting or running:
        while waiting and len(running) < parallelism:
            parser = waiting.popleft()
            seconds = deadline_of(parser, deadline_s)
            tag = job_tag(_what(parser))
            running[parser] = (time.monotonic(), seconds, tag)
            threading.Thread(
                target=_load,
                args=(parser, spark, seconds, tag, done, interrupts),
                name=f"dq-load {_what(parser)}",
                daemon=True,
            ).start()
        first_end = min(started + seconds for started, seconds, _ in running.values())
        try:
            parser, result = done.get(timeout=max(0.0, first_end - time.monotonic()))
        except queue.Empty:
            now = time.monotonic()
            for parser, (started, seconds, tag) in list(running.items()):
                if now >= started + seconds:
                    del running[parser]
                    loaded[parser] = Loaded(None, timed_out(_what(parser), seconds), started, now)
                    _cancel(spark, tag, interrupts)
            continue
        if running.pop(parser, None) is not None:  # else: abandoned, its result comes too late
            loaded[parser] = result
    return loaded
