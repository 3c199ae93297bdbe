"""`dq`: list checks, see what is due, run checks, run the local scheduler, read history (and
annotate it for anomaly detection), write the DAG manifest and the HTML report, manage silences
and the outbox (`dq outbox list|retry`), triage incidents, validate check definitions, check a
worker's environment (`dq doctor`), serve Slack triage and the live pages (`dq serve`). Exit
codes (scheduling/cli/exits.py): 0 all passed or tolerated, 1 a check FAILED (`dq validate`: a
check definition has a problem), 2 usage error, 3 a check could not run (a broken definition
included), 4 the project database or the state disk was unavailable (outcomes spooled, or
recorded without a failing-rows link), 5 `dq run --full` found an incremental check whose stored
states drifted, 70 dq itself crashed (one line on stderr, the traceback in
$DQ_STATE_DIR/logs/dq.log)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from scheduling.cli.annotate import add_annotate_options
from scheduling.cli.backtest import add_backtest_commands
from scheduling.cli.console import Style, outcome_lines
from scheduling.cli.exits import (
    EXIT_ERROR,
    EXIT_FAILED,
    EXIT_INFRA,
    EXIT_INVALID,
    EXIT_OK,
    EXIT_USAGE,
)
from scheduling.cli.incident import add_incident_commands
from scheduling.cli.outbox import add_outbox_commands
from scheduling.cli.project import Project
from scheduling.cli.prune import add_prune_commands
from scheduling.cli.run import add_run_commands
from scheduling.cli.serve import add_serve_commands
from scheduling.cli.silence import add_silence_commands
from scheduling.cli.times import iso_text, parse_time

__all__ = ["main", "parser"]


def _cmd_list(args: argparse.Namespace) -> int:
    now = parse_time(args.at)
    for name, check in args.project.checks().items():
        clock = check.clock
        following = clock.next_fire(now).isoformat() if clock is not None else "manual only"
        print(f"{name:40} {clock!s:40} next {following}")
    return EXIT_OK


def _cmd_history(args: argparse.Namespace) -> int:
    from scheduling.history import history

    words = list(args.check)
    if words[:1] == ["annotate"]:
        from scheduling.cli.annotate import annotate_command

        return annotate_command(args, words)
    if len(words) > 1:
        print("dq history: one check at a time (or: dq history annotate CHECK)", file=sys.stderr)
        return EXIT_USAGE
    check = words[0] if words else None
    records = history(args.project.settings.engine, check, limit=args.limit)
    lines = outcome_lines([r.outcome for r in records], style=Style.of(sys.stdout))
    for record, line in zip(records, lines, strict=True):
        window = record.window_end.isoformat() if record.window_end else "manual"
        print(f"{window:32} {line}")
        for annotation in record.annotations:
            print(f"{'':32}   annotated {annotation}")
    if check is not None:
        from scheduling.cli.annotate import period_lines

        for line in period_lines(args.project.settings.engine, check):
            print(line)
    return EXIT_OK


def _cmd_ready(args: argparse.Namespace) -> int:
    """Exit 0 when the guarded asset passed quality (for the window ending --at), else 1."""
    from scheduling.tick.readiness import is_ready

    at = parse_time(args.at) if args.at else None
    ready = is_ready(args.project.settings.engine, args.asset, at=at)
    window = f" for the window ending {at.isoformat()}" if at else ""
    print(f"{args.asset}: {'ready' if ready else 'not ready'}{window}")
    return EXIT_OK if ready else EXIT_FAILED


def _cmd_manifest(args: argparse.Namespace) -> int:
    from scheduling.airflow.manifest import build_manifest, manifest_path, render, write_manifest

    found = args.project.discovery()
    packages = list(args.project.config.check_packages().names)
    manifest = build_manifest(found.checks.values(), found.problems, packages=packages)
    path = Path(args.out) if args.out else manifest_path(args.project.config.manifest)
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

    path = write_report(args.project.settings.engine, args.out, now=parse_time(args.at))
    print(f"wrote {path}")
    return EXIT_OK


def _cmd_validate(args: argparse.Namespace) -> int:
    from checks.validation import problem_lines, summary

    found = args.project.discovery(quiet=True)
    for line in problem_lines(found.problems):
        print(line)
    if not found.checks and not found.problems:  # a CI that validates nothing must not pass
        print(f"dq validate: {args.project.config.check_packages().hint()}", file=sys.stderr)
        return EXIT_INVALID
    print(summary(found))
    return EXIT_INVALID if found.problems else EXIT_OK


def _cmd_init(args: argparse.Namespace) -> int:
    from scheduling.cli.scaffold import init_command

    return init_command(args.package, Path.cwd())


def _cmd_doctor(args: argparse.Namespace) -> int:
    from scheduling.cli.doctor import doctor

    findings = doctor(args.project.config)
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
    add_run_commands(commands)
    hist = commands.add_parser(
        "history",
        help="recorded outcomes, newest first; `history annotate CHECK` tells anomaly detection",
    )
    hist.add_argument("check", nargs="*", metavar="CHECK | annotate CHECK")
    hist.add_argument("--limit", type=int, default=20)
    add_annotate_options(hist)
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
    add_outbox_commands(commands)
    add_prune_commands(commands)
    add_backtest_commands(commands)
    add_incident_commands(commands)
    add_serve_commands(commands)
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

    from checkers.dq_toml import DqTomlError
    from checkers.project_db import database_url
    from scheduling.airflow.worker_config import WorkerConfigurationError
    from scheduling.cli.crash import crashed
    from scheduling.outage import describe, unavailable

    args = parser().parse_args(argv)
    args.project = Project()  # the configuration, read when a command first needs it
    try:
        return int(args.func(args))
    except (WorkerConfigurationError, DqTomlError) as exc:  # refused with its fix: usage error
        print(f"dq {args.command}: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except Exception as exc:
        if not isinstance(exc, sa.exc.SQLAlchemyError) or not unavailable(exc):
            return crashed(args.command, exc)
        # a command that needs the database, while it is down
        where = sa.engine.make_url(database_url(args.project.config.database_url))
        print(
            f"dq {args.command}: needs the project database ({describe(exc, where)})",
            file=sys.stderr,
        )
        return EXIT_INFRA
    finally:
        args.project.close()
