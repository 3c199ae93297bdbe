"""`dq silence`: mute checks for a while (add, list, expire)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from scheduling.cli.exits import EXIT_OK, EXIT_USAGE
from scheduling.cli.times import iso_text, parse_time


def silence_command(args: argparse.Namespace) -> int:
    from alerting.mutes import Silence
    from alerting.silences import (
        current_silences,
        describe_silence,
        expire_silence,
        new_silence,
        parse_duration,
        store_silence,
    )
    from scheduling.config import os_user

    now = parse_time(args.at)
    settings = args.project.settings
    if args.action == "add":
        try:
            silence = new_silence(
                args.pattern,
                now=now,
                comment=args.comment,
                created_by=args.by or os_user(),
                duration=parse_duration(args.duration) if args.duration else None,
                until=parse_time(args.until) if args.until else None,
                starts_at=parse_time(args.starts) if args.starts else None,
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


def add_silence_commands(commands: Any) -> None:
    """`dq silence add|list|expire` on the CLI's subcommands."""
    silence = commands.add_parser("silence", help="mute checks for a while (add, list, expire)")
    silences = silence.add_subparsers(dest="action", required=True)
    add = silences.add_parser("add", help="silence the checks matching PATTERN (fnmatch)")
    add.add_argument("pattern")
    length = add.add_mutually_exclusive_group(required=True)
    length.add_argument("--for", dest="duration", help="how long: 30m, 2h, 1d12h")
    length.add_argument("--until", type=iso_text, help="ISO end time")
    add.add_argument("--starts", type=iso_text, help="ISO start time (default now)")
    add.add_argument("--comment", required=True, help="why (shown with every muted alert)")
    add.add_argument("--by", help="who (default $USER)")
    listing_silences = silences.add_parser("list", help="active and upcoming silences")
    expire = silences.add_parser("expire", help="end a silence now")
    expire.add_argument("id", type=int)
    for sub in (add, listing_silences, expire):
        sub.add_argument("--at", type=iso_text, help="ISO time taken as now (default now)")
        sub.set_defaults(func=silence_command)
