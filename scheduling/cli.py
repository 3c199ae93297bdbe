"""`dq`: list checks, see what is due, run checks, run the local scheduler, read history, write
the DAG manifest and the HTML report, manage silences, validate check definitions, check a
worker's environment (`dq doctor`). Exit codes (scheduling/exits.py): 0 all passed or tolerated,
1 a check FAILED (`dq validate`: a check definition has a problem), 2 usage error, 3 a check
could not run (a broken definition included), 4 the project database was unavailable (outcomes
spooled), 5 `dq run --full` found an incremental check whose stored states drifted, 70 dq itself
crashed (one line on stderr, the traceback in $DQ_STATE_DIR/logs/dq.log)."""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from checkers.outcome import CheckOutcome
from scheduling.cli_silence import add_silence_commands
from scheduling.cli_times import iso_text, parse_time
from scheduling.console import Style, outcome_lines
from scheduling.exits import (
    EXIT_CRASH,
    EXIT_DRIFT,
    EXIT_ERROR,
    EXIT_FAILED,
    EXIT_INFRA,
    EXIT_INVALID,
    EXIT_OK,
    EXIT_USAGE,
    exit_code,
    run_exit_code,
)

if TYPE_CHECKING:
    from checks.registry import Discovery
    from scheduling.claims import Claim
    from scheduling.run_output import DriftCheck

__all__ = [
    "EXIT_CRASH",
    "EXIT_DRIFT",
    "EXIT_ERROR",
    "EXIT_FAILED",
    "EXIT_INFRA",
    "EXIT_INVALID",
    "EXIT_OK",
    "EXIT_USAGE",
    "exit_code",
    "main",
    "parser",
]


def _discovery(*, quiet: bool = False) -> Discovery:
    """Checks and definition problems of the check packages; problems go to stderr."""
    from checkers.check_packages import configured_packages
    from checks.registry import discover_all
    from checks.validation import problem_lines

    packages = configured_packages()
    packages.make_importable()
    found = discover_all(packages.names)
    if not found.checks and not found.problems and not quiet:
        print(f"dq: {packages.hint()}", file=sys.stderr)
    if found.problems and not quiet:
        print(
            f"dq: {len(found.problems)} check(s) could not be defined (`dq validate` lists them):",
            file=sys.stderr,
        )
        for line in problem_lines(found.problems):
            print(f"  {line}", file=sys.stderr)
    return found


def _checks() -> dict[str, type]:
    return dict(_discovery().checks)


def _print_outcomes(outcomes: Sequence[CheckOutcome]) -> None:
    for line in outcome_lines(outcomes, style=Style.of(sys.stdout)):
        print(line)


def _print_skipped(skipped: Sequence[Claim]) -> None:
    """Windows another run claimed: not outcomes, so they leave the exit code alone."""
    for claim in skipped:
        print(f"- {claim.describe()}")


def _cmd_list(args: argparse.Namespace) -> int:
    now = parse_time(args.at)
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

    windows = due(parse_time(args.at), settings=_settings(), checks=list(_checks().values()))
    for window in windows:
        print(f"{window.check:40} due in ({window.start.isoformat()}, {window.end.isoformat()}]")
    if not windows:
        print("no check is due")
    return EXIT_OK


def _cmd_run(args: argparse.Namespace) -> int:
    from scheduling.progress import RunProgress
    from scheduling.run_output import run_document, run_lines
    from scheduling.runner import run_checks, run_due

    found = _discovery()
    checks, problems = found.checks, found.problems
    now = parse_time(args.at)
    settings = _settings()
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
        infrastructure=bool(report.spooled) or report.database_error is not None,
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
    chosen: Sequence[type], outcomes: Sequence[CheckOutcome], now: dt.datetime, settings: object
) -> DriftCheck:
    """`dq run --full`: compare each incremental check with a recomputation."""
    from scheduling.drift import guard
    from scheduling.run_output import DriftCheck

    reports = guard(chosen, outcomes, now=now, settings=settings)  # type: ignore[arg-type]
    named = {getattr(c, "name", "?") for c in chosen if getattr(c, "incremental", None) is None}
    return DriftCheck(tuple(reports), tuple(sorted(named)))


def _cmd_deliver(args: argparse.Namespace) -> int:
    from alerting.delivery import deliver_pending

    settings = _settings()
    report = deliver_pending(
        settings.engine, settings.receivers, parse_time(args.at), retry=settings.delivery
    )
    print(f"sent {len(report.sent)}, failed {len(report.failed)}, pending {len(report.pending)}")
    return EXIT_OK


def _cmd_scheduler(args: argparse.Namespace) -> int:
    from checkers.project_db import utc_now
    from scheduling.runner import run_due

    interval = dt.timedelta(minutes=args.interval_minutes)
    settings = _settings()
    print(f"dq scheduler: every {interval}; Ctrl-C stops", flush=True)
    try:
        while True:
            now = utc_now()
            found = _discovery()
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


def _cmd_history(args: argparse.Namespace) -> int:
    from scheduling.history import history

    records = history(_settings().engine, args.check, limit=args.limit)
    lines = outcome_lines([r.outcome for r in records], style=Style.of(sys.stdout))
    for record, line in zip(records, lines, strict=True):
        window = record.window_end.isoformat() if record.window_end else "manual"
        print(f"{window:32} {line}")
    return EXIT_OK


def _cmd_ready(args: argparse.Namespace) -> int:
    """Exit 0 when the guarded asset passed quality (for the window ending --at), else 1."""
    from checks.readiness import is_ready

    at = parse_time(args.at) if args.at else None
    ready = is_ready(_settings().engine, args.asset, at=at)
    window = f" for the window ending {at.isoformat()}" if at else ""
    print(f"{args.asset}: {'ready' if ready else 'not ready'}{window}")
    return EXIT_OK if ready else EXIT_FAILED


def _cmd_manifest(args: argparse.Namespace) -> int:
    from checkers.shipping import checks_packages
    from scheduling.manifest import build_manifest, manifest_path, render, write_manifest

    found = _discovery()
    manifest = build_manifest(
        found.checks.values(), found.problems, packages=list(checks_packages())
    )
    path = Path(args.out) if args.out else manifest_path()
    if args.check:
        current = path.read_text() if path.exists() else ""
        if current != render(manifest):
            print(f"{path} is out of date with the checks: run `dq manifest --out {path}`")
            return EXIT_INVALID
        print(f"{path} is current ({len(found.checks) + len(found.problems)} checks)")
        return EXIT_OK
    write_manifest(manifest, path)
    print(f"wrote {path} ({len(found.checks)} checks, {len(found.problems)} with problems)")
    return EXIT_OK


def _cmd_report(args: argparse.Namespace) -> int:
    from scheduling.report import write_report

    path = write_report(_settings().engine, args.out, now=parse_time(args.at))
    print(f"wrote {path}")
    return EXIT_OK


def _cmd_validate(args: argparse.Namespace) -> int:
    from checks.validation import problem_lines, summary

    found = _discovery(quiet=True)
    for line in problem_lines(found.problems):
        print(line)
    print(summary(found))
    return EXIT_INVALID if found.problems else EXIT_OK


def _cmd_init(args: argparse.Namespace) -> int:
    from scheduling.scaffold import init_command

    return init_command(args.package, Path.cwd())


def _cmd_doctor(args: argparse.Namespace) -> int:
    from scheduling.doctor import doctor

    findings = doctor()
    for finding in findings:
        print(finding.line())
    failed = {f.name for f in findings if not f.ok}
    if "database" in failed:
        return EXIT_INFRA
    return EXIT_ERROR if failed else EXIT_OK


def parser() -> argparse.ArgumentParser:
    main = argparse.ArgumentParser(prog="dq", description=__doc__.splitlines()[0])
    commands = main.add_subparsers(dest="command", required=True)
    listing = commands.add_parser("list", help="checks, clocks and next fire")
    listing.add_argument("--at", type=iso_text, help="ISO time (default now)")
    listing.set_defaults(func=_cmd_list)
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
    run.set_defaults(func=_cmd_run)
    deliver = commands.add_parser("deliver", help="deliver pending notifications once")
    deliver.add_argument("--at", type=iso_text, help="ISO time of the delivery (default now)")
    deliver.set_defaults(func=_cmd_deliver)
    scheduler = commands.add_parser("scheduler", help="run due checks every 15 minutes")
    scheduler.add_argument("--interval-minutes", type=float, default=15.0)
    scheduler.set_defaults(func=_cmd_scheduler)
    hist = commands.add_parser("history", help="recorded outcomes, newest first")
    hist.add_argument("check", nargs="?")
    hist.add_argument("--limit", type=int, default=20)
    hist.set_defaults(func=_cmd_history)
    ready = commands.add_parser("ready", help="whether a guarded asset passed quality (exit 0/1)")
    ready.add_argument("asset")
    ready.add_argument(
        "--at", type=iso_text, help="ISO end of the window it must cover (default: its latest)"
    )
    ready.set_defaults(func=_cmd_ready)
    manifest = commands.add_parser("manifest", help="write (or --check) the DAG's check manifest")
    manifest.add_argument("--out", help="where (default DQ_MANIFEST, else beside the DAG)")
    manifest.add_argument(
        "--check", action="store_true", help="exit 1 when the manifest is not current (for CI)"
    )
    manifest.set_defaults(func=_cmd_manifest)
    report = commands.add_parser("report", help="write the HTML report")
    report.add_argument("--out", default=".dq/report.html")
    report.add_argument("--at", type=iso_text, help="ISO time of the report (default now)")
    report.set_defaults(func=_cmd_report)
    add_silence_commands(commands)
    validate = commands.add_parser(
        "validate", help="import every check module and list definition problems (exit 1 if any)"
    )
    validate.set_defaults(func=_cmd_validate)
    init = commands.add_parser("init", help="scaffold a checks package, dq.toml and a test here")
    init.add_argument("package", help="the new checks package's name, e.g. teamchecks")
    init.set_defaults(func=_cmd_init)
    doctor = commands.add_parser(
        "doctor", help="check this worker: database, checks, Spark and its executors (exit 0 if OK)"
    )
    doctor.set_defaults(func=_cmd_doctor)
    return main


def main(argv: Sequence[str] | None = None) -> int:
    import sqlalchemy as sa

    from checkers.project_db import database_url
    from scheduling.crash import crashed
    from scheduling.outage import describe, unavailable
    from scheduling.worker_config import WorkerConfigurationError

    args = parser().parse_args(argv)
    try:
        return int(args.func(args))
    except WorkerConfigurationError as exc:  # refused with its fix: a usage error
        print(f"dq {args.command}: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except Exception as exc:
        if not isinstance(exc, sa.exc.SQLAlchemyError) or not unavailable(exc):
            return crashed(args.command, exc)
        # a command that needs the database, while it is down
        where = sa.engine.make_url(database_url())
        print(
            f"dq {args.command}: needs the project database ({describe(exc, where)})",
            file=sys.stderr,
        )
        return EXIT_INFRA


if __name__ == "__main__":
    sys.exit(main())
