"""`dq`: list checks, see what is due, run checks, run the local scheduler, read history, write
the DAG manifest and the HTML report, manage silences, validate check definitions, check a
worker's environment (`dq doctor`). Exit codes: 0 all passed or tolerated, 1 a check failed
(`dq validate`: a check definition has a problem), 3 a check could not be evaluated (a broken
definition included), 2 usage errors, 4 the project database was unavailable (outcomes
spooled), 5 `dq run --full` found an incremental check whose stored states drifted."""

from __future__ import annotations

import argparse
import datetime as dt
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from checkers.outcome import CheckOutcome, Status

if TYPE_CHECKING:
    from checks.registry import Discovery
    from scheduling.claims import Claim

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_ERROR = 0, 1, 2, 3
EXIT_INFRA = 4  # the project database was unavailable: outcomes went to stderr and the spool
EXIT_INVALID = 1  # `dq validate`: a check definition has a problem
EXIT_DRIFT = 5  # `dq run --full`: an incremental outcome differs from a recomputation


def _parse_time(text: str | None) -> dt.datetime:
    from checkers.storage import utc_now

    if text is None:
        return utc_now()
    moment = dt.datetime.fromisoformat(text)
    return moment if moment.tzinfo else moment.replace(tzinfo=dt.UTC)


def _discovery(*, quiet: bool = False) -> Discovery:
    """Checks and definition problems of the DQ_CHECKS packages; problems go to stderr."""
    from checkers.shipping import checks_packages
    from checks.registry import discover_all
    from checks.validation import problem_lines

    found = discover_all(checks_packages())
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

    found = _discovery()
    checks, problems = found.checks, found.problems
    now = _parse_time(args.at)
    settings = _settings()
    if args.due:
        if args.checks:
            print("dq run: give check names or --due, not both", file=sys.stderr)
            return EXIT_USAGE
        print(f"dq: running the checks due at {now.isoformat()} ...", flush=True)
        report = run_due(now, settings=settings, checks=list(checks.values()), problems=problems)
    else:
        broken = [p for n in args.checks if n not in checks and (p := found.problem(n))]
        unknown = [n for n in args.checks if n not in checks and not found.problem(n)]
        if unknown or not args.checks:
            print(
                f"dq run: unknown checks {unknown}; `dq list` shows them"
                if unknown
                else "dq run: name checks to run, or --due",
                file=sys.stderr,
            )
            return EXIT_USAGE
        print(f"dq: running {len(args.checks)} check(s) ...", flush=True)
        chosen = [checks[n] for n in args.checks if n in checks]
        report = run_checks(chosen, now=now, settings=settings, problems=broken)
    ran = {o.check for o in report.outcomes}
    evaluated = [c for c in checks.values() if c.name in ran]
    drifted = _guard_drift(evaluated, report.outcomes, now, settings) if args.full else False
    _print_outcomes(report.outcomes)
    _print_skipped(report.skipped)
    if report.delivery is not None and report.delivery.pending:
        print(f"  {len(report.delivery.pending)} notification(s) pending for the next run")
    if report.spooled:
        print(f"  {len(report.spooled)} outcome(s) not recorded: spooled for the next run")
    if report.spooled or report.database_error is not None:
        return EXIT_INFRA
    if drifted:
        return EXIT_DRIFT
    return exit_code(report.outcomes)


def _guard_drift(
    chosen: Sequence[type], outcomes: Sequence[CheckOutcome], now: dt.datetime, settings: object
) -> bool:
    """`dq run --full`: compare each incremental check with a recomputation; True on drift."""
    from scheduling.drift import guard

    reports = guard(chosen, outcomes, now=now, settings=settings)  # type: ignore[arg-type]
    named = {getattr(c, "name", "?") for c in chosen if getattr(c, "incremental", None) is None}
    for name in sorted(named):
        print(f"  {name}: not incremental, nothing to compare")
    for report in reports:
        read = report.full.reading
        if not report.differences:
            print(
                f"  {report.check}: no drift (incremental = from scratch over "
                f"{read.get('partitions', 0)} partitions, {read.get('rows_read', 0)} rows)"
            )
            continue
        print(f"  {report.check}: DRIFT, the stored states no longer match the data:")
        for line in report.differences:
            print(f"    {line}")
        print("    its stored partitions are forgotten: the next run reads them all again")
    return any(r.differences for r in reports)


def _cmd_deliver(args: argparse.Namespace) -> int:
    from alerting.delivery import deliver_pending

    settings = _settings()
    report = deliver_pending(
        settings.engine, settings.receivers, _parse_time(args.at), retry=settings.delivery
    )
    print(f"sent {len(report.sent)}, failed {len(report.failed)}, pending {len(report.pending)}")
    return EXIT_OK


def _cmd_scheduler(args: argparse.Namespace) -> int:
    from checkers.storage import utc_now
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

    for record in history(_settings().engine, args.check, limit=args.limit):
        window = record.window_end.isoformat() if record.window_end else "manual"
        print(f"{window:32} {record.outcome.summary()}")
    return EXIT_OK


def _cmd_ready(args: argparse.Namespace) -> int:
    """Exit 0 when the guarded asset passed quality (for the window ending --at), else 1."""
    from checks.readiness import is_ready

    at = _parse_time(args.at) if args.at else None
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

    path = write_report(_settings().engine, args.out, now=_parse_time(args.at))
    print(f"wrote {path}")
    return EXIT_OK


def _cmd_silence(args: argparse.Namespace) -> int:
    import getpass

    from alerting.mutes import Silence
    from alerting.silences import (
        current_silences,
        describe_silence,
        expire_silence,
        new_silence,
        parse_duration,
        store_silence,
    )

    now = _parse_time(args.at)
    settings = _settings()
    if args.action == "add":
        try:
            silence = new_silence(
                args.pattern,
                now=now,
                comment=args.comment,
                created_by=args.by or os.environ.get("USER") or getpass.getuser(),
                duration=parse_duration(args.duration) if args.duration else None,
                until=_parse_time(args.until) if args.until else None,
                starts_at=_parse_time(args.starts) if args.starts else None,
            )
        except ValueError as exc:
            print(f"dq silence add: {exc}", file=sys.stderr)
            return EXIT_USAGE
        with settings.engine.begin() as connection:
            silence = store_silence(connection, silence)
        print(f"silence {silence.id}: {describe_silence(silence)}")
    elif args.action == "expire":
        try:
            with settings.engine.begin() as connection:
                silence = expire_silence(connection, args.id, now)
        except LookupError as exc:
            print(f"dq silence expire: {exc}", file=sys.stderr)
            return EXIT_USAGE
        print(f"silence {silence.id} expired at {now.isoformat()}; the next run reconciles it")
    else:
        configured = [m for m in settings.mutes if isinstance(m, Silence)]
        with settings.engine.connect() as connection:
            silences = current_silences(connection, now, configured)
        for silence in silences:
            ident = "dq.toml" if silence.id is None else str(silence.id)
            state = "active" if silence.starts_at <= now else "upcoming"
            print(f"{ident:>8}  {state:8}  {describe_silence(silence)}")
        if not silences:
            print("no active or upcoming silence")
    return EXIT_OK


def _cmd_validate(args: argparse.Namespace) -> int:
    from checks.validation import problem_lines, summary

    found = _discovery(quiet=True)
    for line in problem_lines(found.problems):
        print(line)
    print(summary(found))
    return EXIT_INVALID if found.problems else EXIT_OK


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
    listing.add_argument("--at", help="ISO time (default now)")
    listing.set_defaults(func=_cmd_list)
    due = commands.add_parser("due", help="checks due at a time")
    due.add_argument("--at", help="ISO time (default now)")
    due.set_defaults(func=_cmd_due)
    run = commands.add_parser("run", help="run checks now, or those due")
    run.add_argument("checks", nargs="*")
    run.add_argument("--due", action="store_true", help="run the checks due (one scheduler tick)")
    run.add_argument("--at", help="ISO time of the run (default now)")
    run.add_argument(
        "--full",
        action="store_true",
        help="drift guard: also recompute incremental checks from scratch and compare (exit 5 "
        "on a difference)",
    )
    run.set_defaults(func=_cmd_run)
    deliver = commands.add_parser("deliver", help="deliver pending notifications once")
    deliver.add_argument("--at", help="ISO time of the delivery (default now)")
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
    ready.add_argument("--at", help="ISO end of the window it must cover (default: its latest)")
    ready.set_defaults(func=_cmd_ready)
    manifest = commands.add_parser("manifest", help="write (or --check) the DAG's check manifest")
    manifest.add_argument("--out", help="where (default DQ_MANIFEST, else beside the DAG)")
    manifest.add_argument(
        "--check", action="store_true", help="exit 1 when the manifest is not current (for CI)"
    )
    manifest.set_defaults(func=_cmd_manifest)
    report = commands.add_parser("report", help="write the HTML report")
    report.add_argument("--out", default=".dq/report.html")
    report.add_argument("--at", help="ISO time of the report (default now)")
    report.set_defaults(func=_cmd_report)
    silence = commands.add_parser("silence", help="mute checks for a while (add, list, expire)")
    silences = silence.add_subparsers(dest="action", required=True)
    add = silences.add_parser("add", help="silence the checks matching PATTERN (fnmatch)")
    add.add_argument("pattern")
    length = add.add_mutually_exclusive_group(required=True)
    length.add_argument("--for", dest="duration", help="how long: 30m, 2h, 1d12h")
    length.add_argument("--until", help="ISO end time")
    add.add_argument("--starts", help="ISO start time (default now)")
    add.add_argument("--comment", required=True, help="why (shown with every muted alert)")
    add.add_argument("--by", help="who (default $USER)")
    listing_silences = silences.add_parser("list", help="active and upcoming silences")
    expire = silences.add_parser("expire", help="end a silence now")
    expire.add_argument("id", type=int)
    for sub in (add, listing_silences, expire):
        sub.add_argument("--at", help="ISO time taken as now (default now)")
        sub.set_defaults(func=_cmd_silence)
    validate = commands.add_parser(
        "validate", help="import every check module and list definition problems (exit 1 if any)"
    )
    validate.set_defaults(func=_cmd_validate)
    doctor = commands.add_parser(
        "doctor", help="check this worker: database, checks, Spark and its executors (exit 0 if OK)"
    )
    doctor.set_defaults(func=_cmd_doctor)
    return main


def main(argv: Sequence[str] | None = None) -> int:
    import sqlalchemy as sa

    from checkers.storage import database_url
    from scheduling.outage import describe, unavailable

    args = parser().parse_args(argv)
    try:
        return int(args.func(args))
    except sa.exc.SQLAlchemyError as exc:  # a command that needs the database, while it is down
        if not unavailable(exc):
            raise
        where = sa.engine.make_url(database_url())
        print(
            f"dq {args.command}: needs the project database ({describe(exc, where)})",
            file=sys.stderr,
        )
        return EXIT_INFRA


if __name__ == "__main__":
    sys.exit(main())
