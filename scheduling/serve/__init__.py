"""`dq serve`: one small web service over the project database. Slack's interactivity and the
`/dq` slash command (signed requests only) triage incidents; the live pages show them. Built
on Starlette and uvicorn with slack_sdk's SignatureVerifier (docs/alerting.md, "Triage in
Slack", says why not Bolt). `slack_manifest` is the Slack app a team creates for it."""

from scheduling.serve.manifest import slack_manifest
from scheduling.serve.server import build_app, serve
from scheduling.serve.signing import MissingSigningSecret, SlackSigning

__all__ = ["MissingSigningSecret", "SlackSigning", "build_app", "serve", "slack_manifest"]
