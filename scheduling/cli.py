"""`dq`: list checks, see what is due, run checks, run the local scheduler, read history, write
the DAG manifest and the HTML report. Exit codes: 0 all passed or tolerated, 1 a check failed,
3 a check could not be evaluated, 2 usage errors."""

from __future__ import annotations

import argparse
import datetime as dt
import os
import sys
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

from checkers.outcome import CheckOutcome, Status

if TYPE_CHECKING:
    from scheduling.claims import Claim

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_ERROR = 0, 1, 2, 3
CHECKS_ENV = "DQ_CHECKS"  # comma-separated packages to import checks from (default: checks)


def _parse_time(text: str | None) -> dt.datetime:
    from checkers.storage import utc_now

    if text is None:
        return utc_now()
    moment = dt.datetime.fromisoformat(text)
    return moment if moment.tzinfo else moment.replace(tzinfo=dt.UTC)


def _checks() -> dict[str, type]:
    from checks import discover

    found: dict[str, type] = {}
    for package in os.environ.get(CHECKS_ENV, "checks").split(","):
        found.update(discover(package.strip()))
    return found


def exit_code(outcomes: Sequence[CheckOutcome]) -> int:
    statuses = {o.status for o in outcomes}
    if Status.ERROR in statuses:
        return EXIT_ERROR
    return EXIT_FAILED if Status.FAILED in statuses else EXIT_OK


def _print_outcomes(outcomes: Sequence[CheckOutcome]) -> None:
    for outcome in outcomes:
        print(f"  {outcome.summary()}")


def _print_skipped(skipped: Sequence[Claim]) -> None:
    """Windows another run claimed: not outcomes, so they leave the exit code alone."""
    for claim in skipped:
        print(f"  {claim.describe()}")


def _cmd_list(args: argparse.Namespace) -> int:
    now = _parse_time(args.at)
    for name, check in _checks().items():
        clock = check.clock  # type: ignore[attr-defined]
        following = clock.next_fire(now).isoformat() if clock is not None else "manual only"
        print(f"{name:40} {clock!s:40} next {following}")
    return EXIT_OK


def _settings():  # type: ignore[no-untyped-def]
    from scheduling.settings import Settings

    return Settings.from_environment()


def _cmd_due(args: argparse.Namespace) -> int:
    from scheduling.runner import due

    windows = due(_parse_time(args.at), settings=_settings(), checks=list(_checks().values()))
    for window in windows:
        print(f"{window.check:40} due in ({window.start.isoformat()}, {window.end.isoformat()}]")
    if not windows:
        print("no check is due")
    return EXIT_OK


def _cmd_run(args: argparse.Namespace) -> int:
    from scheduling.runner import run_checks, run_due

    checks = _checks()
    now = _parse_time(args.at)
    settings = _settings()
    if args.due:
        if args.checks:
            print("dq run: give check names or --due, not both", file=sys.stderr)
            return EXIT_USAGE
        print(f"dq: running the checks due at {now.isoformat()} ...", flush=True)
        report = run_due(now, settings=settings, checks=list(checks.values()))
    else:
        unknown = [n for n in args.checks if n not in checks]
        if unknown or not args.checks:
            print(
                f"dq run: unknown checks {unknown}; `dq list` shows them"
                if unknown
                else "dq run: name checks to run, or --due",
                file=sys.stderr,
            )
            return EXIT_USAGE
        print(f"dq: running {len(args.checks)} check(s) ...", flush=True)
        report = run_checks([checks[n] for n in args.checks], now=now, settings=settings)
    _print_outcomes(report.outcomes)
    _print_skipped(report.skipped)
    if report.delivery is not None and report.delivery.pending:
        print(f"  {len(report.delivery.pending)} notification(s) pending for the next run")
    return exit_code(report.outcomes)


def _cmd_scheduler(args: argparse.Namespace) -> int:
    from checkers.storage import utc_now
    from scheduling.runner import run_due

    interval = dt.timedelta(minutes=args.interval_minutes)
    settings = _settings()
    print(f"dq scheduler: every {interval}; Ctrl-C stops", flush=True)
    try:
        while True:
            now = utc_now()
            report = run_due(now, settings=settings, checks=list(_checks().values()))
            print(f"{now.isoformat()}: {len(report.outcomes)} check(s) ran", flush=True)
            _print_outcomes(report.outcomes)
            _print_skipped(report.skipped)
            epoch = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
            following = epoch + ((utc_now() - epoch) // interval + 1) * interval
            time.sleep(max(0.0, (following - utc_now()).total_seconds()))
    except KeyboardInterrupt:
        return EXIT_OK


def _cmd_history(args: argparse.Namespace) -> int:
    from scheduling.history import history

    for record in history(_settings().engine, args.check, limit=args.limit):
        window = record.window_end.isoformat() if record.window_end else "manual"
        print(f"{window:32} {record.outcome.summary()}")
    return EXIT_OK


def _cmd_manifest(args: argparse.Namespace) -> int:
    from scheduling.manifest import MANIFEST, write_manifest

    path = write_manifest(_checks().values(), args.out or MANIFEST)
    print(f"wrote {path}")
    return EXIT_OK


def _cmd_report(args: argparse.Namespace) -> int:
    from scheduling.report import write_report

    path = write_report(_settings().engine, args.out, now=_parse_time(args.at))
    print(f"wrote {path}")
    return EXIT_OK


def parser() -> argparse.ArgumentParser:
    main = argparse.ArgumentParser(prog="dq", description=__doc__.splitlines()[0])
    commands = main.add_subparsers(dest="command", required=True)
    listing = commands.add_parser("list", help="checks, clocks and next fire")
    listing.add_argument("--at", help="ISO time (default now)")
    listing.set_defaults(func=_cmd_list)
    due = commands.add_parser("due", help="checks due at a time")
    due.add_argument("--at", help="ISO time (default now)")
    due.set_defaults(func=_cmd_due)
    run = commands.add_parser("run", help="run checks now, or those due")
    run.add_argument("checks", nargs="*")
    run.add_argument("--due", action="store_true", help="run the checks due (one scheduler tick)")
    run.add_argument("--at", help="ISO time of the run (default now)")
    run.set_defaults(func=_cmd_run)
    scheduler = commands.add_parser("scheduler", help="run due checks every 15 minutes")
    scheduler.add_argument("--interval-minutes", type=float, default=15.0)
    scheduler.set_defaults(func=_cmd_scheduler)
    hist = commands.add_parser("history", help="recorded outcomes, newest first")
    hist.add_argument("check", nargs="?")
    hist.add_argument("--limit", type=int, default=20)
    hist.set_defaults(func=_cmd_history)
    manifest = commands.add_parser("manifest", help="write the DAG's check manifest")
    manifest.add_argument("--out")
    manifest.set_defaults(func=_cmd_manifest)
    report = commands.add_parser("report", help="write the HTML report")
    report.add_argument("--out", default=".dq/report.html")
    report.add_argument("--at", help="ISO time of the report (default now)")
    report.set_defaults(func=_cmd_report)
    return main


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())
