"""`dq serve` (Slack triage and the live pages) and `dq slack-manifest` (the Slack app for it)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from scheduling.cli.exits import EXIT_OK, EXIT_USAGE


def _cmd_serve(args: argparse.Namespace) -> int:
    from scheduling.serve import MissingSigningSecret, SlackSigning, serve

    config = args.project.config
    try:
        host, port = config.serve_host_port()
        signing = SlackSigning.from_environment()  # no secret: nothing listens, nothing opens
    except (ValueError, MissingSigningSecret) as exc:
        print(f"dq serve: {exc}", file=sys.stderr)
        return EXIT_USAGE
    host = args.host or host
    port = args.port if args.port is not None else port
    print(f"dq serve: http://{host}:{port} (Ctrl-C stops)", flush=True)
    serve(args.project.settings, config, signing=signing, host=host, port=port)
    return EXIT_OK


def _cmd_slack_manifest(args: argparse.Namespace) -> int:
    from scheduling.serve.manifest import slack_manifest

    try:
        manifest = slack_manifest(args.url, name=args.name)
    except ValueError as exc:
        print(f"dq slack-manifest: {exc}", file=sys.stderr)
        return EXIT_USAGE
    print(json.dumps(manifest, indent=2))
    return EXIT_OK


def add_serve_commands(commands: Any) -> None:
    """`dq serve` and `dq slack-manifest` on the CLI's subcommands."""
    serve = commands.add_parser(
        "serve", help="serve Slack triage (/slack/actions, /slack/commands) and the live pages"
    )
    serve.add_argument(
        "--host", help="address to listen on (default from DQ_SERVE_ADDRESS, else 127.0.0.1)"
    )
    serve.add_argument("--port", type=int, help="port (default from DQ_SERVE_ADDRESS, else 8787)")
    serve.set_defaults(func=_cmd_serve)
    manifest = commands.add_parser(
        "slack-manifest", help="print the Slack app manifest (JSON) for a `dq serve` at --url"
    )
    manifest.add_argument("--url", required=True, help="the https URL Slack reaches dq serve at")
    manifest.add_argument("--name", default="dq-checkers", help="the app's name in Slack")
    manifest.set_defaults(func=_cmd_slack_manifest)
