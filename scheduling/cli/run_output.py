"""What `dq run` prints: a line per check and a few closing lines for people, or (`--json`) one
JSON document for programs, with nothing else on stdout."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass

from checkers.outcome import CheckOutcome
from scheduling.claims import ClaimState
from scheduling.cli.console import Style, duration, outcome_lines, seconds, tally
from scheduling.cli.exits import MEANINGS
from scheduling.drift import DriftReport
from scheduling.tick.passes import EnginePass
from scheduling.tick.report import RunReport


@dataclass(frozen=True)
class DriftCheck:
    """What `dq run --full` found: the comparisons, and the checks it had nothing to compare for."""

    reports: tuple[DriftReport, ...] = ()
    not_incremental: tuple[str, ...] = ()

    @property
    def drifted(self) -> bool:
        return any(r.differences for r in self.reports)


def drift_lines(drift: DriftCheck) -> list[str]:
    lines = [f"  {name}: not incremental, nothing to compare" for name in drift.not_incremental]
    for report in drift.reports:
        read = report.full.reading
        if not report.differences:
            lines.append(
                f"  {report.check}: no drift (incremental = from scratch over "
                f"{read.get('partitions', 0)} partitions, {read.get('rows_read', 0)} rows)"
            )
            continue
        lines.append(f"  {report.check}: DRIFT, the stored states no longer match the data:")
        lines += [f"    {line}" for line in report.differences]
        stale = ", ".join(report.forgotten) or "none"
        lines.append(
            f"    its stored partitions are forgotten where they differ from the data "
            f"({len(report.forgotten)} of {report.full.reading.get('partitions', 0)}: {stale}): "
            "the next run reads them again"
        )
    return lines


def run_lines(
    report: RunReport, *, code: int, took: float, style: Style, drift: DriftCheck | None = None
) -> list[str]:
    """The lines after the run: one per check, skipped windows, drift, what is left for the
    next run, and a closing tally with the exit code."""
    lines = outcome_lines(report.outcomes, escalated=report.escalated, style=style)
    lines += [f"- {claim.describe()}" for claim in report.skipped]
    lines += drift_lines(drift or DriftCheck())
    if report.delivery is not None and report.delivery.pending:
        lines.append(f"{len(report.delivery.pending)} notification(s) pending for the next run")
    if report.spooled:
        lines.append(f"{len(report.spooled)} outcome(s) not recorded: spooled for the next run")
    lines += [f"local disk: {problem}" for problem in report.local_errors]
    lines += pass_lines(report.passes)
    ran = len(report.outcomes)
    if (why := nothing_ran(report)) is not None:
        lines.append(f"nothing ran: {why}; exit {code}")
        return lines
    lines.append(
        f"{ran} check{'' if ran == 1 else 's'} in {duration(took)}: {tally(report.outcomes)}; "
        f"exit {code} ({MEANINGS.get(code, '?')})"
    )
    return lines


def nothing_ran(report: RunReport) -> str | None:
    """Why a run evaluated nothing although windows were due (another run holds or did them),
    else None: a wrapper must not take such a run for a green one."""
    if report.outcomes or not report.skipped:
        return None
    held = [c for c in report.skipped if c.state is ClaimState.HELD]
    if held:
        return f"{len(held)} window(s) held by another run, {len(report.skipped) - len(held)} done"
    return f"all {len(report.skipped)} window(s) already done by another run"


def pass_lines(passes: Sequence[EnginePass]) -> list[str]:
    """The engine passes worth a line: those two or more checks shared, and those kept apart from
    other checks of the same source (with why)."""
    return [f"engine pass: {p.describe()}" for p in passes if len(p.checks) > 1 or p.alone]


def _pass_entry(engine_pass: EnginePass) -> dict[str, object]:
    return {
        "checks": list(engine_pass.checks),
        "sources": list(engine_pass.sources),
        "seconds": round(engine_pass.seconds, 3),
        "apart_because": engine_pass.alone,
    }


def _outcome_entry(outcome: CheckOutcome, report: RunReport) -> dict[str, object]:
    raised = report.escalated.get(outcome.check)
    took = seconds(outcome)
    return {
        "check": outcome.check,
        "status": outcome.status.value,
        "level": outcome.level.name,
        "escalated_level": raised.name if raised is not None and raised > outcome.level else None,
        "level_reason": outcome.level_reason,
        "failing": outcome.failing,
        "total": outcome.total,
        "unexcused": outcome.unexcused,
        "failing_keys_distinct": outcome.failing_keys_distinct,
        "error": outcome.error,
        "seconds": None if took is None else round(took, 3),
        "rows_read": outcome.reading.get("rows_read"),
        # metrics answered from file statistics spared reading these bytes
        "bytes_not_read": outcome.reading.get("bytes_not_read", 0),
        "metric_sources": dict(outcome.metric_sources),
    }


def run_document(
    report: RunReport, *, at: dt.datetime, code: int, drift: DriftCheck | None = None
) -> dict[str, object]:
    """`dq run --json`: outcomes, skipped windows, pending notifications, drift, exit code."""
    found = drift or DriftCheck()
    pending: Sequence[str] = report.delivery.pending if report.delivery is not None else ()
    return {
        "at": at.isoformat(),
        "exit_code": code,
        "outcomes": [_outcome_entry(o, report) for o in report.outcomes],
        "skipped": [
            {
                "check": c.check,
                "start": c.start.isoformat(),
                "end": c.end.isoformat(),
                "state": c.state.value,
                "holder": c.holder,
            }
            for c in report.skipped
        ],
        "pending_notifications": list(pending),
        "spooled": [o.check for o in report.spooled],
        "database_error": report.database_error,
        # a run that evaluated nothing because others hold or did its windows (None: it ran)
        "nothing_ran": nothing_ran(report),
        "local_errors": list(report.local_errors),
        "drift": [
            {"check": r.check, "differences": list(r.differences), "forgotten": list(r.forgotten)}
            for r in found.reports
        ],
        "passes": [_pass_entry(p) for p in report.passes],
        # seconds per stage of the tick, in order (scheduling/tick/pipeline.py STAGES)
        "timings": {stage: round(spent, 4) for stage, spent in report.timings.items()},
        "duration_s": round(report.duration_s, 4),
    }
