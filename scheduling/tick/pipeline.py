"""The tick: every run of checks (`dq run`, the local scheduler, an Airflow task) is one call of
`run_tick`, which runs the stages of `STAGES` in order over one `TickState` and times each. The
guarantee each stage holds is in docs/architecture.md and docs/operations.md."""

from __future__ import annotations

import dataclasses
import datetime as dt
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from alerting import EscalationPolicy, deliver_pending
from alerting.pipeline import open_incident_levels
from alerting.reconcile import reconcile_mutes as reconcile
from checkers.dq_toml import DqTomlError
from checkers.outcome import CheckOutcome
from checkers.project_db import database_clock
from checks import QualityCheck, registered
from checks.problems import DefinitionProblem, problem_outcome
from scheduling.claims import (
    Claim,
    ClaimState,
    HeldWindows,
    hold_windows,
    lease_of,
    new_holder,
)
from scheduling.outage import replay_spool as replay
from scheduling.outage import tolerated
from scheduling.retention import prune_daily
from scheduling.settings import Settings
from scheduling.tick.evaluate import Evaluation, judge_all, load, prepare, run_engine
from scheduling.tick.inhibit_rules import inhibit_rules, source_key
from scheduling.tick.known_broken import with_stored_keys
from scheduling.tick.readiness import publish_readiness as publish
from scheduling.tick.record import Recording, Subject, record_all, replayer, save_failing_rows
from scheduling.tick.report import Progress, RunReport, quiet
from scheduling.tick.retry import decided_by_definition, last_statuses, to_retry, wait_s
from scheduling.windows import Window, due_windows, last_window_ends, remember_window_ends

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class TickRequest:
    """What one tick is asked to run. `due`: the candidates due at `now` (each window claimed,
    window ends remembered); else `windows`, claimed (an Airflow task), or none (a manual run,
    not claimed). `problems` (checks that could not be defined) become ERROR outcomes."""

    now: dt.datetime
    checks: Sequence[type[QualityCheck]] = ()
    problems: Sequence[DefinitionProblem] = ()
    due: bool = False
    windows: Sequence[Window] = ()
    retry_errors: bool = False
    #: Seconds before an ERROR outcome is evaluated once more in this tick (None: never);
    #: a check whose incident is already open is not retried (scheduling/tick/retry.py).
    retry_after_s: float | None = None
    spark: SparkSession | None = None
    progress: Progress = quiet


@dataclass
class TickState:
    """What the stages pass on: each reads what earlier stages left and adds its part."""

    request: TickRequest
    settings: Settings
    policy_for: Callable[[str], EscalationPolicy]
    report: RunReport = field(default_factory=RunReport)
    checks: list[type[QualityCheck]] = field(default_factory=list)  # to evaluate
    claimed: HeldWindows | None = None
    evaluation: Evaluation | None = None
    evaluated: list[tuple[Subject, CheckOutcome]] = field(default_factory=list)
    #: Each outcome that was recorded (True) or spooled (False), in order.
    recorded: list[tuple[Subject, CheckOutcome, bool]] = field(default_factory=list)
    _windows: tuple[int, dict[str, tuple[dt.datetime, dt.datetime]]] | None = None

    @property
    def now(self) -> dt.datetime:
        return self.request.now

    def window_of(self, name: str) -> tuple[dt.datetime, dt.datetime] | None:
        windows = self.report.windows
        if self._windows is None or self._windows[0] != len(windows):  # one look-up per check
            first: dict[str, tuple[dt.datetime, dt.datetime]] = {}
            for w in windows:
                first.setdefault(w.check, (w.start, w.end))
            self._windows = (len(windows), first)
        return self._windows[1].get(name)


def replay_spool(state: TickState) -> None:
    """What an outage spooled is recorded first (its windows then count as run), as the record
    stage records: with each check's inhibition rule and source key."""
    known = [*registered().values(), *state.request.checks]
    replay(state.settings, state.now, replayer(state.settings, state.policy_for, known))


def windows_due(
    settings: Settings, checks: Sequence[type[QualityCheck]], now: dt.datetime
) -> list[Window]:
    """The windows of `checks` due at `now`, since each one's last window end."""
    last: dict[str, dt.datetime] = {}  # database unavailable: every check looks back one tick
    with tolerated(settings):
        if settings.database_error is None:
            last = last_window_ends(settings.engine)
    return due_windows([(c.name, c.clock) for c in checks], now, last)


def find_windows(state: TickState) -> None:
    """The windows to run: those due since each check's last window, or the ones asked for."""
    request, settings = state.request, state.settings
    if not request.due:
        state.report.windows = list(request.windows)
        state.checks = list(request.checks)
        return
    windows = windows_due(settings, request.checks, state.now)
    names = {w.check for w in windows}
    state.report.windows = windows
    state.checks = [c for c in request.checks if c.name in names]


def claim_windows(state: TickState) -> None:
    """Claim each window with a lease (renewed while the tick runs); a window another run holds
    or has done is skipped, unless `retry_errors` and its recorded outcome is ERROR. Nothing is
    claimed while the database is unavailable (outcomes spool)."""
    settings, names = state.settings, {c.name for c in state.checks}
    lease = lease_of(settings.config.claim_lease_s if settings.config else None)
    held = None
    if settings.database_error is None:
        with tolerated(settings):
            held = hold_windows(
                settings.engine,
                [(w.check, w.start, w.end) for w in state.report.windows if w.check in names],
                lease=lease,
                clock=database_clock(settings.engine),  # the clock outbox leases use too
                retry_errors=state.request.retry_errors,
            )
    if held is None:
        held = HeldWindows(settings.engine, new_holder(), lease)
    state.claimed = held.__enter__()
    state.checks = [c for c in state.checks if c.name not in held.skipped]
    state.report.skipped = list(held.skipped.values())


def load_sources(state: TickState) -> None:
    """Each check's sources (an incremental check's new and changed partitions), each distinct
    source loaded once, concurrently, within its deadline; a check with keys known broken in
    the project database (alerting.triage) excuses them."""
    if not state.checks:
        return
    count = len(state.checks)
    state.request.progress(f"evaluating {count} check{'' if count == 1 else 's'}")
    settings = state.settings
    if settings.database_error is None:  # keys triage said are known broken, excused this run
        with settings.engine.connect() as connection:
            state.checks = with_stored_keys(state.checks, connection, state.now)
    state.evaluation = _loaded(state, state.checks, state.request.spark)


def _loaded(
    state: TickState, checks: Sequence[type[QualityCheck]], spark: SparkSession | None
) -> Evaluation:
    settings = state.settings
    evaluation = prepare(
        checks,
        spark=spark,
        now=state.now,
        deadline_s=settings.source_deadline_s,
        partitions=settings.partition_store(),
        mutes=settings.mutes,
        use_metadata=settings.metadata_answers,
    )
    load(evaluation, parallelism=settings.load_parallelism)
    return evaluation


def evaluate(state: TickState) -> None:
    """Every checker on the engine: checks over the same data share one pass."""
    if state.evaluation is not None:
        run_engine(state.evaluation)
        state.report.passes = state.evaluation.passes


def judge(state: TickState) -> None:
    """Each result judged by its check's tolerance and levels; each definition problem is its
    check's ERROR outcome."""
    outcomes = judge_all(state.evaluation) if state.evaluation is not None else []
    subjects: list[Subject] = [*state.checks, *state.request.problems]
    problems = [problem_outcome(p, state.now) for p in state.request.problems]
    state.evaluated = list(zip(subjects, [*outcomes, *problems], strict=True))


def retry_once(state: TickState) -> None:
    """An ERROR outcome that opens an incident is evaluated once more, `retry_after_s` after it
    was seen, in the same Spark session, before anything is recorded (an Airflow tick); not one
    its check's definition decides (scheduling/tick/retry.py)."""
    delay, evaluated = state.request.retry_after_s, state.evaluation
    if delay is None or evaluated is None:
        return
    checked = [(c, o) for c, o in state.evaluated if c in state.checks]
    last: dict[str, str] = {}
    if state.settings.database_error is None:
        with tolerated(state.settings), state.settings.engine.connect() as connection:
            last = last_statuses(connection, [c.name for c, _ in checked])
    opened = to_retry([c for c, _ in checked], [o for _, o in checked], last)
    settled = decided_by_definition(evaluated, {c.name for c in opened})
    again = [c for c in opened if c.name not in settled]
    if not again:
        return
    state.request.progress(f"retrying {len(again)} check(s) that could not run")
    time.sleep(wait_s(evaluated, {c.name for c in again}, delay))
    retried = _loaded(state, again, evaluated.session)
    run_engine(retried)
    fresh = {o.check: dataclasses.replace(o, attempts=2) for o in judge_all(retried)}
    state.evaluated = [(s, fresh.get(o.check, o)) for s, o in state.evaluated]


def record(state: TickState) -> None:
    """Each outcome with its incident, outbox rows and done claim in one transaction (spooled when
    the database is unavailable); a window another run took over is skipped, not recorded."""
    assert state.claimed is not None
    rules = inhibit_rules(state.checks, state.now)
    sources = {c.name: source_key(c, state.now) for c in state.checks}
    # inhibitors first, so a failure they explain finds their incident of this run open
    order = sorted(state.evaluated, key=lambda pair: not getattr(pair[0], "inhibits", False))
    state.request.progress(f"recording {len(order)} outcome(s)")
    recordings = []
    for subject, evaluated in order:
        outcome, problem = save_failing_rows(state.settings, evaluated, state.now)
        if problem is not None:
            state.report.local_errors.append(problem)
        recordings.append(
            Recording(
                subject,
                outcome,
                window=state.window_of(subject.name),
                inhibit_rule=rules.get(subject.name),
                source=sources.get(subject.name),
            )
        )
    recorded_all = record_all(state.settings, state.claimed, recordings, state.now)
    results = {
        id(evaluated): (item.outcome, answer)
        for (_, evaluated), item, answer in zip(order, recordings, recorded_all, strict=True)
    }
    for subject, evaluated in state.evaluated:  # reported in the run's order
        outcome, recorded = results[id(evaluated)]
        if isinstance(recorded, Claim):  # another run took the window over
            state.report.skipped.append(recorded)
            continue
        state.report.outcomes.append(outcome)
        if not recorded:
            state.report.spooled.append(outcome)
        state.recorded.append((subject, outcome, recorded))


def publish_readiness(state: TickState) -> None:
    """Readiness markers of guarded assets, only after their outcome is recorded (a crash in
    between leaves no marker)."""
    for subject, outcome, recorded in state.recorded:
        engine = state.settings.engine if recorded else None
        window = state.window_of(subject.name)
        if gate := publish(engine, subject, outcome, state.now, window=window):
            state.report.readiness.append(gate)


def remember_windows(state: TickState) -> None:
    """The windows are done: leases stop renewing; a due tick remembers `now` as the last window
    end of every candidate it ran, and a window another run did as that window's end."""
    if state.claimed is not None:
        state.claimed.__exit__(None, None, None)
        state.claimed = None
    if not state.request.due:
        return
    settings = state.settings
    skipped = {c.check: c for c in state.report.skipped}
    with tolerated(settings):
        if settings.database_error is None:
            ran = [c.name for c in state.request.checks if c.name not in skipped]
            remember_window_ends(settings.engine, ran, state.now)
            for other in (c for c in skipped.values() if c.state is ClaimState.DONE):
                # its run may have died before remembering: the next window starts after it
                remember_window_ends(settings.engine, [other.check], other.end)
    # a window held by a live run is remembered by that run (or taken over once its lease expires)


def reconcile_mutes(state: TickState) -> None:
    """Incidents whose silence or maintenance window ended are notified as they stand now."""
    settings = state.settings
    state.request.progress("delivering notifications")
    with tolerated(settings):
        if settings.database_error is None:
            reconcile(settings.engine, state.policy_for, state.now, mutes=settings.mutes)


def deliver(state: TickState) -> None:
    """Pending notifications sent, every receiver in parallel within the delivery budget."""
    settings = state.settings
    with tolerated(settings):
        if settings.database_error is None:
            state.report.delivery = deliver_pending(
                settings.engine, settings.receivers, state.now, retry=settings.delivery
            )


def prune_history(state: TickState) -> None:
    """Once a day (the day's first tick, whichever runner): history past dq.toml's [retention]
    removed (scheduling.retention). A prune that fails costs the prune, never the tick."""
    settings = state.settings
    if settings.database_error is not None:
        return
    with tolerated(settings):
        try:
            prune_daily(settings, state.now)
        except (OSError, DqTomlError) as exc:
            log.error("daily prune not done: %s", exc)


def summarize(state: TickState) -> None:
    """Each check's effective (escalated) level after this tick, as alerts show it."""
    settings = state.settings
    with tolerated(settings):
        if settings.database_error is None:
            with settings.engine.connect() as connection:
                state.report.escalated = open_incident_levels(
                    connection, [o.check for o in state.report.outcomes]
                )
    state.report.database_error = settings.database_error


Stage = Callable[[TickState], None]

#: The tick, in order. Each stage's time is in `RunReport.timings` under its name.
STAGES: tuple[Stage, ...] = (
    replay_spool,
    find_windows,
    claim_windows,
    load_sources,
    evaluate,
    judge,
    retry_once,
    record,
    publish_readiness,
    remember_windows,
    reconcile_mutes,
    deliver,
    prune_history,
    summarize,
)


def policies(
    settings: Settings, checks: Sequence[type[QualityCheck]]
) -> Callable[[str], EscalationPolicy]:
    """Each check's policy by name (replayed and reconciled checks may not run in this tick)."""
    known = {c.name: settings.policy_for(c) for c in [*registered().values(), *checks]}
    return lambda name: known.get(name, settings.default_policy)


def run_tick(request: TickRequest, settings: Settings) -> RunReport:
    """Run the stages of `STAGES` in order; a failing or broken check never stops the others.
    Claims still held when a stage raises are released."""
    state = TickState(request, settings, policies(settings, request.checks))
    began = time.perf_counter()
    try:
        for stage in STAGES:
            started = time.perf_counter()
            stage(state)
            state.report.timings[stage.__name__] = time.perf_counter() - started
    except BaseException as exc:
        if state.claimed is not None:
            state.claimed.__exit__(type(exc), exc, exc.__traceback__)
        raise
    state.report.duration_s = time.perf_counter() - began
    log.info(
        "tick at %s: %d outcome(s) in %.2f s; stages: %s",
        request.now.isoformat(),
        len(state.report.outcomes),
        state.report.duration_s,
        ", ".join(f"{name} {seconds:.2f} s" for name, seconds in state.report.timings.items()),
    )
    return state.report
