"""The `/dq` slash command: `status CHECK`, `ack INCIDENT`, `snooze CHECK 4h`, `help`. Parsing is
pure; `status_text` reads the project database (fast: Slack waits 3 s for the answer), while
acknowledging and snoozing run after the answer (scheduling.serve.work)."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from sqlalchemy.engine import Engine

from alerting.receivers.slack import escape
from alerting.silences import parse_duration
from alerting.triage import IncidentView, incident_views
from scheduling.report.data import load_histories
from scheduling.report.sections import status_words

__all__ = ["HELP", "BadCommand", "Command", "parse_command", "status_text"]

HELP = (
    "*/dq* triages data-quality incidents:\n"
    "• `/dq status CHECK`: the check's latest outcome and open incident\n"
    "• `/dq ack INCIDENT`: acknowledge an incident (stops its escalation over time)\n"
    "• `/dq snooze CHECK 4h`: no notification of the check's open incident for a while "
    "(30m, 4h, 1d, 7d)\n"
    "• `/dq help`: this text"
)


class BadCommand(ValueError):
    """Text `/dq` does not understand; the message says what it expects."""


@dataclass(frozen=True)
class Command:
    verb: str  # status | ack | snooze | help
    check: str | None = None
    incident_id: int | None = None
    duration: dt.timedelta | None = None


def parse_command(text: str) -> Command:
    words = text.split()
    if not words or words[0].lower() == "help":
        return Command("help")
    verb, rest = words[0].lower(), words[1:]
    if verb == "status" and len(rest) == 1:
        return Command("status", check=rest[0])
    if verb == "ack" and len(rest) == 1:
        if not rest[0].lstrip("#").isdigit():
            raise BadCommand(f"`/dq ack INCIDENT` takes an incident number, not {rest[0][:40]!r}")
        return Command("ack", incident_id=int(rest[0].lstrip("#")))
    if verb == "snooze" and len(rest) == 2:
        try:
            duration = parse_duration(rest[1])
        except ValueError as exc:
            raise BadCommand(f"`/dq snooze CHECK DURATION`: {exc}") from None
        return Command("snooze", check=rest[0], duration=duration)
    raise BadCommand(f"`/dq {text.strip()[:60]}` is not a /dq command. Try `/dq help`.")


def open_incident_of(engine: Engine, check: str) -> IncidentView | None:
    with engine.connect() as connection:
        return next((v for v in incident_views(connection) if v.check == check), None)


def _incident_line(view: IncidentView, page: str | None) -> str:
    parts = [
        f"Incident {view.id}: open since {view.opened_at:%Y-%m-%d %H:%M} UTC, "
        f"level {view.level.name}"
    ]
    if view.acknowledged_by:
        parts.append(f"acknowledged by @{view.acknowledged_by}")
    if view.snoozed_until:
        parts.append(f"snoozed until {view.snoozed_until:%Y-%m-%d %H:%M} UTC")
    if page:
        parts.append(f"<{page}/incidents/{view.id}|details>")
    return ", ".join(parts)


def status_text(engine: Engine, check: str, *, now: dt.datetime, page: str | None) -> str:
    """One check's latest outcome and open incident, as Slack mrkdwn (values escaped)."""
    history = next((h for h in load_histories(engine, now=now) if h.name == check), None)
    if history is None:
        return f"No run of `{escape(check)}` is recorded."
    word, detail = status_words(history.latest.outcome)
    lines = [
        f"*{escape(check)}*: {escape(word)}"
        + (f" ({escape(detail)})" if detail else "")
        + f", latest run {history.latest.at:%Y-%m-%d %H:%M} UTC"
    ]
    view = open_incident_of(engine, check)
    lines.append(_incident_line(view, page) if view else "No open incident.")
    return "\n".join(lines)
