"""`dq outbox list|retry`: what is left to send or failed for good, and failed notifications sent
again once their cause is fixed."""

from __future__ import annotations

import argparse
from typing import Any

from scheduling.cli.exits import EXIT_OK
from scheduling.cli.times import iso_text, parse_time


def outbox_command(args: argparse.Namespace) -> int:
    from alerting.delivery import deliver_pending
    from alerting.outbox_requests import LISTED, outbox_entries, retry_failed
    from scheduling.cli.incident import cli_actor

    settings = args.project.settings
    if args.action == "list":
        statuses = [args.status] if args.status else list(LISTED)
        with settings.engine.connect() as connection:
            entries = outbox_entries(
                connection, statuses=statuses, receiver=args.receiver, incident_id=args.incident
            )
        for entry in entries:
            print(entry.line())
        if not entries:
            print(f"no {' or '.join(statuses)} notification")
        return EXIT_OK
    now = parse_time(args.at)
    with settings.engine.begin() as connection:
        retried = retry_failed(
            connection, cli_actor(), now, receiver=args.receiver, incident_id=args.incident
        )
    print(f"{len(retried)} failed notification(s) pending again")
    if retried and not args.no_deliver:
        report = deliver_pending(settings.engine, settings.receivers, now, retry=settings.delivery)
        print(f"delivered: {len(report.sent)} sent, {len(report.failed)} failed")
    return EXIT_OK


def add_outbox_commands(commands: Any) -> None:
    """`dq outbox list|retry` on the CLI's subcommands."""
    outbox = commands.add_parser("outbox", help="notifications to send or failed (list, retry)")
    actions = outbox.add_subparsers(dest="action", required=True)
    listing = actions.add_parser("list", help="pending and failed notifications")
    listing.add_argument("--status", choices=["pending", "failed", "sent"], help="only these")
    retry = actions.add_parser("retry", help="send failed notifications again (then deliver)")
    retry.add_argument("--no-deliver", action="store_true", help="leave them to the next run")
    retry.add_argument("--at", type=iso_text, help="ISO time taken as now (default now)")
    for sub in (listing, retry):
        sub.add_argument("--receiver", help="of this receiver only")
        sub.add_argument("--incident", type=int, help="of this incident only")
        sub.set_defaults(func=outbox_command)
