"""What one tick did (`RunReport`): its outcomes, the windows it considered, what it skipped,
spooled, delivered and published, which checks shared an engine pass, and each stage's time."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from alerting import DeliveryReport
from checkers.levels import AlertLevel
from checkers.outcome import CheckOutcome
from scheduling.claims import Claim
from scheduling.tick.passes import EnginePass
from scheduling.tick.readiness import Readiness
from scheduling.windows import Window


@dataclass
class RunReport:
    outcomes: list[CheckOutcome] = field(default_factory=list)
    windows: list[Window] = field(default_factory=list)
    delivery: DeliveryReport | None = None
    spooled: list[CheckOutcome] = field(default_factory=list)  # not recorded: database down
    database_error: str | None = None
    #: What the local disk refused (failing-row files not written): the outcomes are recorded.
    local_errors: list[str] = field(default_factory=list)
    skipped: list[Claim] = field(default_factory=list)  # windows another run holds or did
    #: What each guarded check's run did to its asset's readiness marker; `error`: not written.
    readiness: list[Readiness] = field(default_factory=list)
    #: Check -> the effective (escalated) level of its open incident after this run.
    escalated: dict[str, AlertLevel] = field(default_factory=dict)
    #: Seconds spent in each stage of the tick, by stage name, in the order they ran.
    timings: dict[str, float] = field(default_factory=dict)
    #: Seconds from the tick's first stage to the end of its last.
    duration_s: float = 0.0
    #: The engine passes of the tick: which checks shared one, and why some did not.
    passes: list[EnginePass] = field(default_factory=list)


#: Told what a run does next ("evaluating 10 checks", "recording 3/10: x"): a live display.
Progress = Callable[[str], None]


def quiet(stage: str) -> None:
    """The default Progress: nobody is watching."""
