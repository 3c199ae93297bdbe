"""`dq incident list|show|ack|snooze|expected`: the triage actions of Slack's buttons, from a
terminal with the project's settings; the actor is the OS user (source "cli")."""

from __future__ import annotations

import argparse
import datetime as dt
import sys
from typing import TYPE_CHECKING, Any

from scheduling.cli.exits import EXIT_OK, EXIT_USAGE
from scheduling.cli.times import iso_text, parse_time

if TYPE_CHECKING:
    from alerting.triage import Actor, IncidentView


def cli_actor() -> Actor:
    """The OS user running `dq`."""
    from alerting.triage import Actor
    from scheduling.config import os_user

    user = os_user()
    return Actor(user, user, "cli")


def _when(moment: dt.datetime | None) -> str:
    return moment.strftime("%Y-%m-%d %H:%M UTC") if moment else "-"


def view_line(view: IncidentView) -> str:
    """One incident on one line: id, level, check, state, since, who acknowledged, snooze."""
    state = (
        view.status
        if view.open
        else f"resolved{' as ' + view.resolved_as if view.resolved_as else ''}"
    )
    parts = [
        f"{view.id:>6}",
        f"{view.level.name:8}",
        f"{view.check:32}",
        f"{state:20}",
        f"since {_when(view.opened_at)}",
    ]
    if view.acknowledged_by:
        parts.append(f"acknowledged by @{view.acknowledged_by}")
    if view.snoozed_until:
        parts.append(f"snoozed until {_when(view.snoozed_until)}")
    return "  ".join(parts)


def _show(args: argparse.Namespace, now: dt.datetime) -> None:
    from alerting.triage import incident_events, incident_view

    with args.project.settings.engine.connect() as connection:
        view = incident_view(connection, args.id, now=now)
        events = incident_events(connection, args.id)
    print(view_line(view))
    facts = [
        ("scope", view.scope or "-"),
        ("owner", view.owner or "-"),
        ("failing runs", str(view.failing_runs)),
        (
            "acknowledged",
            f"@{view.acknowledged_by} at {_when(view.acknowledged_at)}"
            if view.acknowledged_by
            else "-",
        ),
        ("snoozed until", _when(view.snoozed_until)),
        (
            "resolved",
            f"{_when(view.resolved_at)} {view.resolved_as or ''}".strip()
            if view.resolved_at
            else "-",
        ),
        ("reason", view.resolution_note or "-"),
        ("runbook", view.runbook or "-"),
        ("PagerDuty dedup_key", view.dedup_key),
    ]
    for label, value in facts:
        print(f"  {label + ':':22}{value}")
    print("  timeline:" if events else "  timeline: nothing done yet")
    for event in events:
        print(f"    {_when(event.at)}  {event.source:5}  {event.detail}")


def incident_command(args: argparse.Namespace) -> int:
    from alerting.silences import parse_duration
    from alerting.triage import (
        UnknownIncident,
        acknowledge,
        incident_views,
        mark_expected,
        snooze,
    )

    now = parse_time(args.at)
    engine = args.project.settings.engine
    try:
        if args.action == "list":
            with engine.connect() as connection:
                views = incident_views(connection, open_only=not args.all, now=now)
            for view in views:
                print(view_line(view))
            if not views:
                print("no open incident" if not args.all else "no incident recorded")
            return EXIT_OK
        if args.action == "show":
            _show(args, now)
            return EXIT_OK
        actor = cli_actor()
        if args.action == "ack":
            result = acknowledge(engine, args.id, actor, now=now)
        elif args.action == "snooze":
            result = snooze(engine, args.id, actor, duration=parse_duration(args.duration), now=now)
        else:
            result = mark_expected(
                engine,
                args.id,
                actor,
                now=now,
                reason=args.reason,
                known_broken_for=parse_duration(args.known_broken_for)
                if args.known_broken_for
                else None,
            )
    except (UnknownIncident, ValueError) as exc:
        message = exc.args[0] if exc.args else str(exc)
        print(f"dq incident {args.action}: {message}", file=sys.stderr)
        return EXIT_USAGE
    print(f"incident {result.incident_id}: {result.message}")
    if result.changed and args.action != "snooze":
        print("the receivers hear of it on the next delivery (`dq run` or `dq deliver`)")
    return EXIT_OK


def add_incident_commands(commands: Any) -> None:
    """`dq incident list|show|ack|snooze|expected` on the CLI's subcommands."""
    incident = commands.add_parser(
        "incident", help="triage incidents: list, show, ack, snooze, expected"
    )
    actions = incident.add_subparsers(dest="action", required=True)
    listing = actions.add_parser("list", help="open incidents, the highest level first")
    listing.add_argument("--all", action="store_true", help="resolved ones too")
    show = actions.add_parser("show", help="one incident and its timeline")
    ack = actions.add_parser("ack", help="acknowledge: escalation stops, PagerDuty acknowledged")
    pause = actions.add_parser("snooze", help="hold its notifications back for a while")
    expected = actions.add_parser("expected", help="resolve it as expected (anomalies learn it)")
    for sub in (show, ack, pause, expected):
        sub.add_argument("id", type=int, help="the incident id (`dq incident list`)")
    pause.add_argument("duration", help="how long: 1h, 4h, 24h, 7d")
    expected.add_argument("--reason", help="why it is expected (shown in Slack and the log)")
    expected.add_argument(
        "--known-broken-for",
        metavar="DURATION",
        help="also excuse its failing keys for this long (a row check with key columns)",
    )
    for sub in (listing, show, ack, pause, expected):
        sub.add_argument("--at", type=iso_text, help="ISO time taken as now (default now)")
        sub.set_defaults(func=incident_command)
