"""Faults around whole `dq run` ticks: overlapping runs, a read-only project database, slow
sources, broken check definitions. These evaluate checks, so they start Spark: in their own
`dq` processes, except the slow-sources tick, which runs in this process."""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path
from unittest import mock

import sqlalchemy as sa

from benchmarks.faults.tally import Row, arrivals, tally
from checkers.outcome import Status
from checkers.spark import spark_session
from scheduling.history import history
from scheduling.settings import Settings
from tests.checks.slow_tick import DEADLINE_S, DELAYS_S, slow_env, slow_sources_tick
from tests.scheduling.broken_package import DEFINITION_PROBLEMS, GOOD, RUN_PROBLEMS, dq, package_env
from tests.scheduling.databases import fresh_database
from tests.scheduling.outages import outage_env, read_only_then_writable, spooled
from tests.scheduling.overlapping import overlapping_due_runs


def overlapping(fault: str, kind: str) -> Row:
    with tempfile.TemporaryDirectory() as tmp:
        runs = overlapping_due_runs(kind, Path(tmp))
    found = arrivals(runs.slack, runs.pagerduty, runs.mailbox)
    notes = (
        f"exit codes {sorted(runs.codes)}; {runs.recorded['runs']} evaluation, "
        f"{runs.recorded['incidents']} incident, the other run skipped the window"
    )
    expected = {"slack root": 1, "email": 1, "pagerduty trigger": 1}
    return tally(fault, expected, found, runs.seconds, notes)


def read_only_database(fault: str) -> Row:
    with tempfile.TemporaryDirectory() as tmp, fresh_database("postgres", Path(tmp)) as url:
        env = outage_env(Path(tmp))
        alert_file = Path(env["DQ_STATE_DIR"]) / "alerts.jsonl"
        started = time.perf_counter()
        steps = read_only_then_writable(sa.make_url(url), env)
        first = next(steps)
        held = len(spooled(env))
        during = len(arrivals(alert_file=alert_file))
        second = next(steps)
        seconds = time.perf_counter() - started
        notes = (
            f"exit {first.returncode}: {held} outcomes spooled, {during} alerts (stderr has it); "
            f"writable again: exit {second.returncode}, replayed and delivered"
        )
        return tally(
            fault, {"file cli_positive": 1}, arrivals(alert_file=alert_file), seconds, notes
        )


def slow_sources(fault: str) -> Row:
    spark = spark_session()  # started first: the wall time is the tick's, not the JVM's start
    try:
        with (
            tempfile.TemporaryDirectory() as tmp,
            mock.patch.dict(os.environ, slow_env(Path(tmp))),
        ):
            tick = slow_sources_tick(Path(tmp))
            found = arrivals(alert_file=Path(tmp) / "state" / "alerts.jsonl")
    finally:
        spark.stop()  # nothing else here needs Spark
    passed = sum(o.status is Status.PASSED for o in tick.report.outcomes if o.check in tick.healthy)
    notes = (
        f"deadline {DEADLINE_S} s; the slow sources' delays add up to {DELAYS_S:.0f} s (the "
        f"silent server's: forever); {passed}/{len(tick.healthy)} healthy checks passed"
    )
    expected = {f"file {name}": 1 for name in tick.slow}
    return tally(fault, expected, found, tick.took, notes)


def broken_checks(fault: str) -> Row:
    with tempfile.TemporaryDirectory() as tmp, mock.patch.dict(os.environ, package_env(Path(tmp))):
        started = time.perf_counter()
        tick = dq("run", "--due", "--at", "2026-11-22T07:00:00")
        seconds = time.perf_counter() - started
        found = arrivals(alert_file=Path(tmp) / "state" / "alerts.jsonl")
        recorded = {
            r.outcome.check for r in history(Settings.from_environment().engine, limit=10_000)
        }
    broken = [*DEFINITION_PROBLEMS, *RUN_PROBLEMS]
    failing = [name for name, status in GOOD.items() if status is Status.FAILED]
    notes = (
        f"exit {tick.returncode}; {len(broken)} broken (one a syntax error) each an ERROR, "
        f"{len(set(GOOD) & recorded)}/{len(GOOD)} good checks ran and recorded "
        f"({len(failing)} of them FAILED, alerted)"
    )
    return tally(fault, {f"file {name}": 1 for name in broken + failing}, found, seconds, notes)
