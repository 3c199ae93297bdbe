"""Which checks of a tick shared an engine pass, and why a check that reads the same source as
others did not (`dq run` prints it): checks share a pass when their checkers read the same data
the same way (checkers.checker.same_data), whatever DataFrame object each holds."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from checkers.checker import CheckerResult

#: Why checks reading a shared source did not share one pass.
OWN_TRANSFORMATION = (
    "other checks read that source differently (a filter, projection or join of their own): "
    "one pass per way of reading it"
)
INCREMENTAL = "incremental: it reads only its new and changed partitions"


@dataclass(frozen=True)
class EnginePass:
    """One engine pass of a tick: the checks it served, the sources they read, its time; and
    `alone`, why these checks did not share the pass of other checks reading the same source."""

    checks: tuple[str, ...]
    sources: tuple[str, ...]
    seconds: float
    alone: str | None = None

    def describe(self) -> str:
        what = ", ".join(self.checks)
        read = " + ".join(self.sources) or "given data"
        text = f"{len(self.checks)} check{'' if len(self.checks) == 1 else 's'} over {read}: {what}"
        return (
            f"{text} (apart from other checks of that source: {self.alone})" if self.alone else text
        )


#: A check of the tick: its name, the sources it reads and its result (None: nothing ran).
Evaluated = tuple[str, tuple[str, ...], CheckerResult | None]


def passes_of(evaluated: Sequence[Evaluated]) -> list[EnginePass]:
    """The tick's engine passes, in order. A check whose sources other checks also read, in a
    pass it does not share with them, is told why."""
    grouped: dict[int, list[Evaluated]] = {}
    incremental: list[Evaluated] = []
    for entry in evaluated:
        result = entry[2]
        if result is None or (result.error is not None and result.engine_pass is None):
            continue  # it never reached the engine: its outcome says why
        if result.engine_pass is None:
            incremental.append(entry)
        else:
            grouped.setdefault(result.engine_pass, []).append(entry)
    readers: dict[str, int] = {}
    for entry in evaluated:
        for source in entry[1]:
            readers[source] = readers.get(source, 0) + 1
    passes = []
    for members in [*grouped.values(), *([e] for e in incremental)]:
        sources = tuple(dict.fromkeys(s for _, read, _ in members for s in read))
        shared_source = any(readers[s] > len(members) for s in sources)
        result = members[0][2]
        alone = None
        if shared_source and result is not None:
            alone = INCREMENTAL if result.engine_pass is None else OWN_TRANSFORMATION
        seconds = result.pass_s if result is not None else 0.0
        passes.append(EnginePass(tuple(n for n, _, _ in members), sources, seconds, alone))
    return passes
