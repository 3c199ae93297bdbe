"""`dq run`, `dq due`, `dq deliver` and `dq scheduler`: the commands that evaluate checks or
deliver their notifications."""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import json
import sys
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from checkers.outcome import CheckOutcome
from scheduling.cli.console import Style, outcome_lines
from scheduling.cli.exits import EXIT_OK, EXIT_USAGE, run_exit_code
from scheduling.cli.times import iso_text, parse_time

if TYPE_CHECKING:
    from checks.base import QualityCheck
    from scheduling.claims import Claim
    from scheduling.cli.run_output import DriftCheck
    from scheduling.settings import Settings


def _print_outcomes(outcomes: Sequence[CheckOutcome]) -> None:
    for line in outcome_lines(outcomes, style=Style.of(sys.stdout)):
        print(line)


def _print_skipped(skipped: Sequence[Claim]) -> None:
    """Windows another run claimed: not outcomes, so they leave the exit code alone."""
    for claim in skipped:
        print(f"- {claim.describe()}")


def _cmd_due(args: argparse.Namespace) -> int:
    from scheduling.runner import due

    now, settings = parse_time(args.at), args.project.settings
    found = args.project.discovery()
    windows = due(now, settings=settings, checks=list(found.checks.values()))
    for window in windows:
        print(f"{window.check:40} due in ({window.start.isoformat()}, {window.end.isoformat()}]")
    for problem in found.problems:  # `dq run --due` gives each its ERROR outcome every tick
        print(f"{problem.name:40} due every tick: an ERROR until fixed ({problem.reason})")
    if not windows and not found.problems:
        print("no check is due")
    return EXIT_OK


def _cmd_run(args: argparse.Namespace) -> int:
    from scheduling.cli.progress import RunProgress
    from scheduling.cli.run_output import run_document, run_lines
    from scheduling.runner import run_checks, run_due

    found = args.project.discovery()
    checks, problems = found.checks, found.problems
    now = parse_time(args.at)
    settings = args.project.settings
    if args.no_metadata:  # this run scans every metric
        settings = dataclasses.replace(settings, metadata_answers=False)
    if args.due and args.checks:
        print("dq run: give check names or --due, not both", file=sys.stderr)
        return EXIT_USAGE
    broken = [p for n in args.checks if n not in checks and (p := found.problem(n))]
    unknown = [n for n in args.checks if n not in checks and not found.problem(n)]
    if not args.due and (unknown or not args.checks):
        print(
            f"dq run: unknown checks {unknown}; `dq list` shows them"
            if unknown
            else "dq run: name checks to run, or --due",
            file=sys.stderr,
        )
        return EXIT_USAGE
    if not args.json:
        what = "the checks due" if args.due else f"{len(args.checks)} check(s)"
        print(f"dq run: {what} at {now.isoformat()}", flush=True)
    started = time.perf_counter()
    with RunProgress(enabled=not args.json and sys.stdout.isatty()) as progress:
        if args.due:
            chosen = list(checks.values())
            report = run_due(
                now, settings=settings, checks=chosen, problems=problems, progress=progress
            )
        else:
            chosen = [checks[n] for n in args.checks if n in checks]
            report = run_checks(
                chosen, now=now, settings=settings, problems=broken, progress=progress
            )
        ran = {o.check for o in report.outcomes}
        evaluated = [c for c in checks.values() if c.name in ran]
        drift = _guard_drift(evaluated, report.outcomes, now, settings) if args.full else None
    code = run_exit_code(
        report.outcomes,
        infrastructure=bool(report.spooled or report.local_errors)
        or report.database_error is not None,
        drifted=drift is not None and drift.drifted,
    )
    if args.json:
        print(json.dumps(run_document(report, at=now, code=code, drift=drift), indent=2))
        return code
    took = time.perf_counter() - started
    style = Style.of(sys.stdout)
    for line in run_lines(report, code=code, took=took, style=style, drift=drift):
        print(line)
    return code


def _guard_drift(
    chosen: Sequence[type[QualityCheck]],
    outcomes: Sequence[CheckOutcome],
    now: dt.datetime,
    settings: Settings,
) -> DriftCheck:
    """`dq run --full`: compare each incremental check with a recomputation."""
    from scheduling.cli.run_output import DriftCheck
    from scheduling.drift import guard

    reports = guard(chosen, outcomes, now=now, settings=settings)
    named = {c.name for c in chosen if c.incremental is None}
    return DriftCheck(tuple(reports), tuple(sorted(named)))


def _cmd_deliver(args: argparse.Namespace) -> int:
    from alerting.delivery import deliver_pending

    settings = args.project.settings
    report = deliver_pending(
        settings.engine, settings.receivers, parse_time(args.at), retry=settings.delivery
    )
    print(f"sent {len(report.sent)}, failed {len(report.failed)}, pending {len(report.pending)}")
    return EXIT_OK


def _cmd_scheduler(args: argparse.Namespace) -> int:
    from checkers.project_db import utc_now
    from scheduling.runner import run_due

    interval = dt.timedelta(minutes=args.interval_minutes)
    settings = args.project.settings
    print(f"dq scheduler: every {interval}; Ctrl-C stops", flush=True)
    try:
        while True:
            now = utc_now()
            found = args.project.discovery()
            report = run_due(
                now, settings=settings, checks=list(found.checks.values()), problems=found.problems
            )
            print(f"{now.isoformat()}: {len(report.outcomes)} check(s) ran", flush=True)
            _print_outcomes(report.outcomes)
            _print_skipped(report.skipped)
            epoch = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
            following = epoch + ((utc_now() - epoch) // interval + 1) * interval
            time.sleep(max(0.0, (following - utc_now()).total_seconds()))
    except KeyboardInterrupt:
        return EXIT_OK


def add_run_commands(commands: Any) -> None:
    """`dq due|run|deliver|scheduler` on the CLI's subcommands."""
    due = commands.add_parser("due", help="checks due at a time")
    due.add_argument("--at", type=iso_text, help="ISO time (default now)")
    due.set_defaults(func=_cmd_due)
    run = commands.add_parser("run", help="run checks now, or those due")
    run.add_argument("checks", nargs="*")
    run.add_argument("--due", action="store_true", help="run the checks due (one scheduler tick)")
    run.add_argument("--at", type=iso_text, help="ISO time of the run (default now)")
    run.add_argument(
        "--json",
        action="store_true",
        help="print one JSON document (outcomes, skipped windows, pending notifications, exit "
        "code) and nothing else on stdout",
    )
    run.add_argument(
        "--full",
        action="store_true",
        help="drift guard: also recompute incremental checks from scratch and compare (exit 5 "
        "on a difference)",
    )
    run.add_argument(
        "--no-metadata",
        action="store_true",
        help="scan every metric: none answered from file statistics (Parquet footers, Delta "
        "logs, Iceberg manifests) this run (DQ_METADATA_ANSWERS=0 for every run)",
    )
    run.set_defaults(func=_cmd_run)
    deliver = commands.add_parser("deliver", help="deliver pending notifications once")
    deliver.add_argument("--at", type=iso_text, help="ISO time of the delivery (default now)")
    deliver.set_defaults(func=_cmd_deliver)
    scheduler = commands.add_parser("scheduler", help="run due checks every 15 minutes")
    scheduler.add_argument("--interval-minutes", type=float, default=15.0)
    scheduler.set_defaults(func=_cmd_scheduler)
