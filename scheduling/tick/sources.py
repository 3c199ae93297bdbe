"""Loading a tick's sources: each distinct parser once, a few at a time, each within its
deadline. A source past its deadline is reported as timed out and abandoned: no check waits."""

from __future__ import annotations

import queue
import threading
import time
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from checkers.deadlines import timed_out, within

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from checkers.parsers import Parser

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


def _load(
    parser: Parser,
    spark: SparkSession,
    seconds: float,
    done: queue.SimpleQueue[tuple[Parser, Loaded]],
) -> None:
    from checkers.parsers import SourceError

    started = time.monotonic()
    try:
        with within(seconds):
            frame = parser.load(spark)
        done.put((parser, Loaded(frame, None, started, time.monotonic())))
    except SourceError as exc:
        done.put((parser, Loaded(None, str(exc), started, time.monotonic())))
    except Exception as exc:
        done.put((parser, Loaded(None, _describe(exc), started, time.monotonic())))


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
    joined at exit, so a hung source could hold the process. An abandoned load ends when its
    driver's own timeout (derived from the same deadline) fires; its late result is dropped."""
    if parallelism < 1:
        raise ValueError(f"parallelism must be at least 1: {parallelism}")
    waiting = deque(dict.fromkeys(parsers))
    done: queue.SimpleQueue[tuple[Parser, Loaded]] = queue.SimpleQueue()
    running: dict[Parser, tuple[float, float]] = {}  # parser -> (started, seconds allowed)
    loaded: dict[Parser, Loaded] = {}
    while waiting or running:
        while waiting and len(running) < parallelism:
            parser = waiting.popleft()
            seconds = deadline_of(parser, deadline_s)
            running[parser] = (time.monotonic(), seconds)
            threading.Thread(
                target=_load,
                args=(parser, spark, seconds, done),
                name=f"dq-load {_what(parser)}",
                daemon=True,
            ).start()
        first_end = min(started + seconds for started, seconds in running.values())
        try:
            parser, result = done.get(timeout=max(0.0, first_end - time.monotonic()))
        except queue.Empty:
            now = time.monotonic()
            for parser, (started, seconds) in list(running.items()):
                if now >= started + seconds:
                    del running[parser]
                    loaded[parser] = Loaded(None, timed_out(_what(parser), seconds), started, now)
            continue
        if running.pop(parser, None) is not None:  # else: abandoned, its result comes too late
            loaded[parser] = result
    return loaded
