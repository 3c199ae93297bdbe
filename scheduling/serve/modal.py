"""The "this is expected" modal (pure builder) and the one Slack Web API call `dq serve` makes
itself, `views.open`, with the bot token of the project's Slack receiver."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from scheduling.serve.interactions import (
    EXPECTED_CALLBACK,
    KEYS_BLOCK,
    KEYS_INPUT,
    REASON_BLOCK,
    REASON_INPUT,
)

log = logging.getLogger(__name__)

#: The known-broken choices a row check's incident offers: (value, label).
KNOWN_BROKEN_CHOICES = (
    ("no", "No"),
    ("1d", "For 1 day"),
    ("7d", "For 7 days"),
    ("30d", "For 30 days"),
)


def _option(value: str, label: str) -> dict[str, object]:
    return {"text": {"type": "plain_text", "text": label}, "value": value}


def expected_view(incident_id: int, check: str, *, offer_known_broken: bool) -> dict[str, object]:
    """The modal: an optional reason, and (for an incident with failing keys) whether they
    become known broken."""
    blocks: list[dict[str, object]] = [
        {
            "type": "section",
            "text": {
                "type": "plain_text",
                "text": f"Resolve incident {incident_id} of {check[:200]} as expected.",
            },
        },
        {
            "type": "input",
            "block_id": REASON_BLOCK,
            "optional": True,
            "label": {"type": "plain_text", "text": "Why is it expected?"},
            "element": {"type": "plain_text_input", "action_id": REASON_INPUT},
        },
    ]
    if offer_known_broken:
        blocks.append(
            {
                "type": "input",
                "block_id": KEYS_BLOCK,
                "optional": True,
                "label": {"type": "plain_text", "text": "Treat its failing keys as known broken?"},
                "element": {
                    "type": "static_select",
                    "action_id": KEYS_INPUT,
                    "initial_option": _option(*KNOWN_BROKEN_CHOICES[0]),
                    "options": [_option(value, label) for value, label in KNOWN_BROKEN_CHOICES],
                },
            }
        )
    return {
        "type": "modal",
        "callback_id": EXPECTED_CALLBACK,
        "private_metadata": str(incident_id),
        "title": {"type": "plain_text", "text": "This is expected"},
        "submit": {"type": "plain_text", "text": "Resolve"},
        "close": {"type": "plain_text", "text": "Cancel"},
        "blocks": blocks,
    }


@dataclass(frozen=True)
class SlackApi:
    """Where the Web API is and which environment variable holds the bot token."""

    token_env: str
    base_url: str | None = None
    timeout_s: float = 10.0

    def open_view(self, trigger_id: str, view: dict[str, object]) -> bool:
        """`views.open`; False (logged, token never shown) when Slack refused it."""
        from slack_sdk import WebClient
        from slack_sdk.errors import SlackApiError

        from checkers.env_secrets import secret_from_env

        client = WebClient(
            token=secret_from_env(self.token_env, what="Slack bot token"),
            base_url=self.base_url or WebClient.BASE_URL,
            timeout=max(1, int(self.timeout_s)),
            retry_handlers=[],
        )
        try:
            client.views_open(trigger_id=trigger_id, view=view)
        except SlackApiError as exc:
            log.warning("views.open failed: %s", exc.response.get("error"))
            return False
        return True
