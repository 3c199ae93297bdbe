"""What a Slack interaction asks for, read from its payload (pure; no I/O): a button or menu on
an incident's message (`block_actions`), or the submitted "this is expected" modal
(`view_submission`). Each carries a request key that is the same when Slack, a proxy or a
double-sent form repeats the request, so the action is applied once."""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass
from typing import Any

from alerting.receivers.slack_actions import ACTION_IDS, parse_snooze, parse_value
from alerting.silences import parse_duration

__all__ = [
    "EXPECTED_CALLBACK",
    "ActionRequest",
    "BadInteraction",
    "ExpectedSubmission",
    "SlackUser",
    "parse_interaction",
]

#: The callback_id of the "this is expected" modal; its private_metadata is the incident id.
EXPECTED_CALLBACK = "dq_expected"
REASON_BLOCK, REASON_INPUT = "reason", "reason_input"
KEYS_BLOCK, KEYS_INPUT = "known_broken", "known_broken_for"


class BadInteraction(ValueError):
    """A signed payload dq cannot act on (a shape or value it does not know)."""


@dataclass(frozen=True)
class SlackUser:
    id: str
    name: str


@dataclass(frozen=True)
class ActionRequest:
    """A click on one of an incident's buttons (or a snooze menu choice)."""

    action: str  # acknowledge | snooze | expected | runbook
    incident_id: int
    user: SlackUser
    request_key: str | None  # None: Slack sent no id for it; the action's state still dedupes
    snooze_for: dt.timedelta | None = None
    trigger_id: str | None = None  # to open the "expected" modal (valid for 3 s)
    response_url: str | None = None
    confirm: bool = False  # also tell the person when it worked (a slash command has no thread)


@dataclass(frozen=True)
class ExpectedSubmission:
    """The "this is expected" modal, submitted."""

    incident_id: int
    user: SlackUser
    request_key: str | None  # None: Slack sent no id for it; the action's state still dedupes
    reason: str | None
    known_broken_for: dt.timedelta | None


def _user(payload: dict[str, Any]) -> SlackUser:
    user = payload.get("user") or {}
    ident = str(user.get("id") or "").strip()
    if not ident:
        raise BadInteraction("the payload names no user")
    name = user.get("username") or user.get("name") or ident
    return SlackUser(ident, str(name))


def _incident_id(text: object) -> int:
    value = str(text or "").strip()
    if not value.isdigit():
        raise BadInteraction(f"{value[:40]!r} is not an incident id")
    return int(value)


def _action(payload: dict[str, Any]) -> ActionRequest:
    actions = payload.get("actions") or []
    if not actions:
        raise BadInteraction("a block_actions payload without actions")
    clicked = actions[0]
    action = str(clicked.get("action_id") or "")
    if action not in ACTION_IDS:
        raise BadInteraction(f"unknown action_id {action[:40]!r}")
    value = clicked.get("value") or (clicked.get("selected_option") or {}).get("value") or ""
    user = _user(payload)
    snooze_for = None
    try:
        if action == "snooze":
            incident_id, snooze_for = parse_snooze(str(value))
        else:
            incident_id = parse_value(str(value))
    except ValueError as exc:
        raise BadInteraction(str(exc)) from None
    # action_ts is Slack's id of this click: a resent request has the same, a second click not
    action_ts = clicked.get("action_ts")
    key = f"slack:{action}:{incident_id}:{user.id}:{action_ts}" if action_ts else None
    return ActionRequest(
        action,
        incident_id,
        user,
        key,
        snooze_for,
        payload.get("trigger_id") or None,
        payload.get("response_url") or None,
    )


def _submission(payload: dict[str, Any]) -> ExpectedSubmission:
    view = payload.get("view") or {}
    if view.get("callback_id") != EXPECTED_CALLBACK:
        raise BadInteraction(f"unknown view {str(view.get('callback_id'))[:40]!r}")
    values = (view.get("state") or {}).get("values") or {}
    reason = ((values.get(REASON_BLOCK) or {}).get(REASON_INPUT) or {}).get("value")
    chosen = ((values.get(KEYS_BLOCK) or {}).get(KEYS_INPUT) or {}).get("selected_option")
    known_broken_for = None
    if chosen and chosen.get("value") not in (None, "", "no"):
        try:
            known_broken_for = parse_duration(str(chosen["value"]))
        except ValueError as exc:
            raise BadInteraction(f"known-broken duration: {exc}") from None
    return ExpectedSubmission(
        _incident_id(view.get("private_metadata")),
        _user(payload),
        f"slack:view:{view['id']}" if view.get("id") else None,  # one view is submitted once
        (reason or "").strip() or None,
        known_broken_for,
    )


def parse_interaction(form_payload: str) -> ActionRequest | ExpectedSubmission:
    """The `payload` form field of a request to /slack/actions, read."""
    try:
        payload = json.loads(form_payload)
    except ValueError:
        raise BadInteraction("the payload is not JSON") from None
    if not isinstance(payload, dict):
        raise BadInteraction("the payload is not a JSON object")
    kind = payload.get("type")
    if kind == "block_actions":
        return _action(payload)
    if kind == "view_submission":
        return _submission(payload)
    raise BadInteraction(f"interaction type {str(kind)[:40]!r} is not handled")
