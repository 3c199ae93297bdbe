"""The `dq serve` application (Starlette): Slack's interactivity and slash-command requests,
verified and answered at once with the triage work queued after the answer (Starlette runs a
response's background tasks once it is sent, in a worker thread), and the read-only live pages.
A request to a Slack route that is not signed by Slack is 401 and changes nothing."""

from __future__ import annotations

import base64
import hashlib
import logging
from urllib.parse import parse_qs

import sqlalchemy as sa
from starlette.applications import Starlette
from starlette.background import BackgroundTask
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from alerting.receivers.slack import escape
from alerting.triage import UnknownIncident
from scheduling.report.assets import JS
from scheduling.serve import pages
from scheduling.serve.commands import HELP, BadCommand, open_incident_of, parse_command, status_text
from scheduling.serve.interactions import (
    ActionRequest,
    BadInteraction,
    SlackUser,
    parse_interaction,
)
from scheduling.serve.signing import SlackSigning
from scheduling.serve.work import Triage

log = logging.getLogger(__name__)

__all__ = ["create_app"]

_SCRIPT_HASH = base64.b64encode(hashlib.sha256(JS.encode()).digest()).decode()
#: The pages load nothing: inline style, SVG and the report's one script (by its hash).
PAGE_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; style-src 'unsafe-inline'; "
        f"script-src 'sha256-{_SCRIPT_HASH}'; img-src data:; base-uri 'none'; "
        "form-action 'none'; frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}
REFUSED = {"error": "invalid request"}
#: Slack's interaction payloads are a few kB; more is not Slack.
MAX_BODY = 1 << 20


class _TooLarge(Exception):
    pass


async def _body(request: Request) -> bytes:
    """The raw body, read up to MAX_BODY (an unsigned sender cannot make the server hold more)."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > MAX_BODY:
        raise _TooLarge
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_BODY:
            raise _TooLarge
        chunks.append(chunk)
    return b"".join(chunks)


async def _signed_form(request: Request, signing: SlackSigning) -> dict[str, str] | None:
    """The form fields of a request Slack signed, else None. The signature covers the raw body,
    so the body is verified before anything in it is read."""
    body = await _body(request)
    if not signing.verified(body, request.headers):
        return None
    fields = parse_qs(body.decode(), keep_blank_values=True)
    return {name: values[0] for name, values in fields.items()}


async def _refused(request: Request, exc: Exception) -> Response:
    return JSONResponse({"error": "request body too large"}, status_code=413)


def _ephemeral(text: str, background: BackgroundTask | None = None) -> JSONResponse:
    return JSONResponse({"response_type": "ephemeral", "text": text}, background=background)


def create_app(triage: Triage, signing: SlackSigning, *, page_url: str | None = None) -> Starlette:
    """The application over one project (`triage`); Slack requests verified by `signing`."""

    async def slack_actions(request: Request) -> Response:
        form = await _signed_form(request, signing)
        if form is None:
            return JSONResponse(REFUSED, status_code=401)
        if retry := request.headers.get("x-slack-retry-num"):
            log.info("Slack retried a request (%s): applied once by its request key", retry)
        try:
            interaction = parse_interaction(form.get("payload", ""))
        except BadInteraction as exc:
            log.warning("Slack interaction refused: %s", exc)
            return JSONResponse({"error": str(exc)}, status_code=400)
        if isinstance(interaction, ActionRequest):
            if interaction.action == "runbook":  # a link button: Slack opened it
                return Response(status_code=200)
            return Response(status_code=200, background=BackgroundTask(triage.act, interaction))
        # the modal closes on an empty 200; the resolution shows in the incident's thread
        return Response(
            status_code=200, background=BackgroundTask(triage.submit_expected, interaction)
        )

    async def slack_commands(request: Request) -> Response:
        form = await _signed_form(request, signing)
        if form is None:
            return JSONResponse(REFUSED, status_code=401)
        try:
            command = parse_command(form.get("text", ""))
        except BadCommand as exc:
            return _ephemeral(escape(str(exc)))  # it quotes what was typed
        if command.verb == "help":
            return _ephemeral(HELP)
        if command.verb == "status":
            assert command.check is not None
            text = await run_in_threadpool(
                status_text, triage.engine, command.check, now=triage.clock(), page=page_url
            )
            return _ephemeral(text)
        user = SlackUser(
            form.get("user_id") or "", form.get("user_name") or form.get("user_id", "")
        )
        if not user.id:
            return JSONResponse({"error": "the command names no user"}, status_code=400)
        incident_id = command.incident_id
        if command.verb == "snooze":
            assert command.check is not None
            found = await run_in_threadpool(open_incident_of, triage.engine, command.check)
            if found is None:
                return _ephemeral(f"`{escape(command.check)}` has no open incident to snooze.")
            incident_id = found.id
        assert incident_id is not None
        action = "acknowledge" if command.verb == "ack" else "snooze"
        work = ActionRequest(
            action,
            incident_id,
            user,
            f"slack:command:{trigger}" if (trigger := form.get("trigger_id")) else None,
            snooze_for=command.duration,
            response_url=form.get("response_url") or None,
            confirm=True,
        )
        verb = "Acknowledging" if action == "acknowledge" else "Snoozing"
        return _ephemeral(f"{verb} incident {incident_id}…", BackgroundTask(triage.act, work))

    def index(request: Request) -> Response:
        return HTMLResponse(
            pages.index_page(triage.engine, now=triage.clock()), headers=PAGE_HEADERS
        )

    def incident(request: Request) -> Response:
        try:
            html = pages.incident_page(
                triage.engine, request.path_params["incident_id"], now=triage.clock()
            )
        except UnknownIncident as exc:
            return PlainTextResponse(str(exc), status_code=404)
        return HTMLResponse(html, headers=PAGE_HEADERS)

    def check(request: Request) -> Response:
        name = request.path_params["name"]
        html = pages.check_page(triage.engine, name, now=triage.clock())
        if html is None:
            return PlainTextResponse(f"no run of {name!r} is recorded", status_code=404)
        return HTMLResponse(html, headers=PAGE_HEADERS)

    def api_incidents(request: Request) -> Response:
        open_only = request.query_params.get("all") not in ("1", "true")
        found = pages.incidents_json(triage.engine, now=triage.clock(), open_only=open_only)
        return JSONResponse({"incidents": found})

    def healthz(request: Request) -> Response:
        try:
            with triage.engine.connect() as connection:
                connection.execute(sa.text("SELECT 1"))
        except sa.exc.SQLAlchemyError as exc:
            return JSONResponse({"ok": False, "database": type(exc).__name__}, status_code=503)
        return JSONResponse({"ok": True})

    return Starlette(
        exception_handlers={_TooLarge: _refused},
        routes=[
            Route("/slack/actions", slack_actions, methods=["POST"]),
            Route("/slack/commands", slack_commands, methods=["POST"]),
            Route("/", index, methods=["GET"]),
            Route("/incidents/{incident_id:int}", incident, methods=["GET"]),
            Route("/checks/{name:path}", check, methods=["GET"]),
            Route("/api/incidents", api_incidents, methods=["GET"]),
            Route("/healthz", healthz, methods=["GET"]),
        ],
    )
