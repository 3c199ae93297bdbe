"""`dq prune`: remove history past its retention (scheduling/retention.py)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from scheduling.cli.exits import EXIT_OK, EXIT_USAGE
from scheduling.cli.times import iso_text, parse_time


def prune_command(args: argparse.Namespace) -> int:
    from scheduling.retention import Retention, prune

    try:
        retention = Retention(
            runs_days=args.runs_days,
            incidents_days=args.incidents_days,
            claims_days=args.claims_days,
            failing_rows_days=args.failing_rows_days,
        )
    except ValueError as exc:
        print(f"dq prune: {exc}", file=sys.stderr)
        return EXIT_USAGE
    pruned = prune(args.project.settings, parse_time(args.at), retention)
    print(f"pruned {pruned.line()}")
    return EXIT_OK


def add_prune_commands(commands: Any) -> None:
    """`dq prune` on the CLI's subcommands."""
    sub = commands.add_parser("prune", help="remove history past its retention")
    sub.add_argument("--runs-days", type=int, default=90, help="keep runs this long (90)")
    sub.add_argument("--incidents-days", type=int, default=90, help="keep resolved incidents (90)")
    sub.add_argument("--claims-days", type=int, default=90, help="keep done window claims (90)")
    sub.add_argument(
        "--failing-rows-days", type=int, default=30, help="keep failing-row files (30)"
    )
    sub.add_argument("--at", type=iso_text, help="ISO time taken as now (default now)")
    sub.set_defaults(func=prune_command)
