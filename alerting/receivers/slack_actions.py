"""The triage buttons of a Slack incident message (pure): `acknowledge`, a `snooze` menu (1 h,
4 h, 24 h, 7 days), `expected`, and a `runbook` link when the check declares one. Each carries
the incident id in its `value` (the snooze options `ID:DURATION`); `dq serve` reads them back
with `parse_value` and `parse_snooze`."""

from __future__ import annotations

import datetime as dt

from alerting.model import RUNBOOK_LINK, Notification, NotifyReason
from alerting.render import linkable

ACKNOWLEDGE, SNOOZE, EXPECTED, RUNBOOK = "acknowledge", "snooze", "expected", "runbook"
ACTION_IDS = (ACKNOWLEDGE, SNOOZE, EXPECTED, RUNBOOK)
#: The snooze menu: label, the duration's text in the option's value, the duration.
SNOOZE_CHOICES = (
    ("1 hour", "1h", dt.timedelta(hours=1)),
    ("4 hours", "4h", dt.timedelta(hours=4)),
    ("24 hours", "24h", dt.timedelta(hours=24)),
    ("7 days", "7d", dt.timedelta(days=7)),
)
_DURATIONS = {text: duration for _, text, duration in SNOOZE_CHOICES}


def _text(label: str) -> dict[str, object]:
    return {"type": "plain_text", "text": label, "emoji": True}


def actions_block(n: Notification) -> dict[str, object] | None:
    """The buttons for `n`'s incident: none once it is resolved (the runbook link stays)."""
    incident = str(n.incident_id)
    elements: list[dict[str, object]] = []
    if not n.resolved:
        if not n.acknowledged_by:
            elements.append(
                {
                    "type": "button",
                    "action_id": ACKNOWLEDGE,
                    "text": _text("Acknowledge"),
                    "style": "primary",
                    "value": incident,
                }
            )
        elements.append(
            {
                "type": "static_select",
                "action_id": SNOOZE,
                "placeholder": _text("Snooze"),
                "options": [
                    {"text": _text(label), "value": f"{incident}:{text}"}
                    for label, text, _ in SNOOZE_CHOICES
                ],
            }
        )
        elements.append(
            {
                "type": "button",
                "action_id": EXPECTED,
                "text": _text("This is expected"),
                "value": incident,
            }
        )
    runbook = n.links.get(RUNBOOK_LINK)
    if runbook and linkable(runbook):
        elements.append(
            {
                "type": "button",
                "action_id": RUNBOOK,
                "text": _text("Runbook"),
                "url": runbook[:3000],
                "value": incident,
            }
        )
    if not elements:
        return None
    return {"type": "actions", "block_id": f"dq_triage_{incident}", "elements": elements}


def carries_buttons(n: Notification) -> bool:
    """Whether the thread reply of `n` carries the buttons too: the one that raised the level."""
    return n.reason is NotifyReason.LEVEL_RAISED


def parse_value(value: str) -> int:
    """The incident id in a button's value; ValueError when it is not one."""
    if not value.isdigit():
        raise ValueError(f"not an incident id: {value!r}")
    return int(value)


def parse_snooze(value: str) -> tuple[int, dt.timedelta]:
    """(incident id, duration) of a snooze option's value `ID:DURATION`."""
    incident, _, text = value.partition(":")
    if text not in _DURATIONS:
        raise ValueError(f"not a snooze choice: {value!r}")
    return parse_value(incident), _DURATIONS[text]
