"""Both sides of a comparison at work at once: each side lives on a thread of its own, where its
session is opened, used and closed (some drivers, SQLite's among them, tie a connection to the
thread that opened it). A question goes to both threads and waits for both answers, so a
comparison takes as long as the slower engine, not the two one after the other."""

from __future__ import annotations

import contextvars
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import AbstractContextManager, contextmanager
from typing import TypeVar

from checkers.consistency.sides import Side

T = TypeVar("T")


class Pair:
    """The two sides and their threads (use `opened`)."""

    def __init__(self, left: Side, right: Side, threads: tuple[ThreadPoolExecutor, ...]) -> None:
        self.left = left
        self.right = right
        self._threads = threads

    def both(self, ask: Callable[[Side, int], T]) -> tuple[T, T]:
        """`ask(side, 0)` on the left's thread and `ask(side, 1)` on the right's, at once; when
        either fails, the other is still awaited, then the left's error is raised first."""
        return _gather(
            [
                _submit(pool, ask, side, index)
                for index, (pool, side) in enumerate(
                    zip(self._threads, (self.left, self.right), strict=True)
                )
            ]
        )


@contextmanager
def opened(left: Side, right: Side) -> Iterator[Pair]:
    """Open both sides' sessions (each on its own thread) and close them on the way out."""
    with (
        ThreadPoolExecutor(1, thread_name_prefix="dq-consistency-left") as left_thread,
        ThreadPoolExecutor(1, thread_name_prefix="dq-consistency-right") as right_thread,
    ):
        pair = Pair(left, right, (left_thread, right_thread))
        sessions: list[AbstractContextManager[None] | None] = [None, None]

        def enter(side: Side, index: int) -> None:
            session = side.session()
            session.__enter__()
            sessions[index] = session

        def leave(_side: Side, index: int) -> None:
            session = sessions[index]
            if session is not None:
                sessions[index] = None
                session.__exit__(None, None, None)

        try:
            pair.both(enter)
            yield pair
        finally:
            pair.both(leave)


def _submit(
    pool: ThreadPoolExecutor, ask: Callable[[Side, int], T], side: Side, index: int
) -> Future[T]:
    # The caller's context (the source deadline among it) goes along to the side's thread.
    context = contextvars.copy_context()
    return pool.submit(context.run, ask, side, index)


def _gather(futures: list[Future[T]]) -> tuple[T, T]:
    errors = [f.exception() for f in futures]  # waits for every one
    for error in errors:
        if error is not None:
            raise error
    first, second = (f.result() for f in futures)
    return first, second
