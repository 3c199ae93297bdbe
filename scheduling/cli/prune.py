"""`dq prune`: remove history past its retention (scheduling/retention.py)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from scheduling.cli.exits import EXIT_OK, EXIT_USAGE
from scheduling.cli.times import iso_text, parse_time


def prune_command(args: argparse.Namespace) -> int:
    from dataclasses import replace

    from scheduling.retention import prune, retention_from_document

    settings = args.project.settings
    configured = retention_from_document(settings.config.document if settings.config else {})
    given = {k: v for k, v in vars(args).items() if k.endswith("_days") and v is not None}
    try:
        retention = replace(configured, **given)
    except ValueError as exc:
        print(f"dq prune: {exc}", file=sys.stderr)
        return EXIT_USAGE
    pruned = prune(settings, parse_time(args.at), retention)
    print(f"pruned {pruned.line()}")
    return EXIT_OK


def add_prune_commands(commands: Any) -> None:
    """`dq prune` on the CLI's subcommands."""
    sub = commands.add_parser("prune", help="remove history past its retention")
    # each defaults to dq.toml's [retention], else 90 days (failing-row files 30)
    sub.add_argument("--runs-days", type=int, help="keep runs this long")
    sub.add_argument("--incidents-days", type=int, help="keep resolved incidents")
    sub.add_argument("--claims-days", type=int, help="keep done window claims")
    sub.add_argument("--failing-rows-days", type=int, help="keep failing-row files")
    sub.add_argument("--at", type=iso_text, help="ISO time taken as now (default now)")
    sub.set_defaults(func=prune_command)
