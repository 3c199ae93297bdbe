"""Slack through the Web API (bot token): one root message per incident, later notifications as
thread replies with the root edited to the current state, `reply_broadcast` when the level rises,
and the recovery in the thread. `slack_calls` is the pure payload builder."""

from __future__ import annotations

import re
import urllib.parse
from dataclasses import dataclass

from alerting.model import Notification, NotifyReason
from alerting.receivers.base import Delivery, Thread
from alerting.render import facts, headline, linkable, sample_text, title
from checkers.env_secrets import env_name, secret_from_env

RETRYABLE_ERRORS = {
    "ratelimited",
    "internal_error",
    "fatal_error",
    "service_unavailable",
    "request_timeout",
}
LEVEL_EMOJI = {
    "WARNING": ":warning:",
    "ERROR": ":x:",
    "CRITICAL": ":rotating_light:",
    "RESOLVED": ":white_check_mark:",
}


def escape(text: str) -> str:
    """Slack mrkdwn control characters (&, <, >) as entities."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def link(url: str, label: str) -> str:
    """`<url|label>` that neither part can break out of: `|`, `<`, `>` and blanks in the URL
    percent-encoded (the URL still works), `&` as an entity, the label escaped. A URL of another
    scheme than http(s), file or mailto is shown as text, not linked."""
    if not linkable(url):
        return escape(f"{label}: {url}")
    safe = re.sub(r"[|<>\s]", lambda m: urllib.parse.quote(m.group()), url)
    return f"<{escape(safe)}|{escape(label)}>"


def _limit(text: str, size: int) -> str:
    return text if len(text) <= size else text[: size - 1] + "…"


def root_blocks(n: Notification) -> list[dict[str, object]]:
    """The root message: the incident's current state."""
    o = n.outcome
    state = "RESOLVED" if n.resolved else n.level.name
    blocks: list[dict[str, object]] = [
        {"type": "header", "text": {"type": "plain_text", "text": _limit(title(n), 150)}},
        {
            "type": "section",
            "text": {
                "type": "mrkdwn",
                "text": _limit(
                    f"{LEVEL_EMOJI[state]} *{escape(headline(n))}*\n{escape(o.description)}", 3000
                ),
            },
        },
        {
            "type": "section",
            "fields": [
                {"type": "mrkdwn", "text": _limit(f"*{escape(f.label)}*\n{escape(f.value)}", 2000)}
                for f in facts(n)[:10]
            ],
        },
    ]
    table = sample_text(n)
    if table:
        blocks.append(
            {
                "type": "section",
                "text": {
                    "type": "mrkdwn",
                    "text": _limit(f"*Sample of failing elements*\n```{escape(table)}```", 3000),
                },
            }
        )
    links = [link(url, label) for label, url in sorted(n.links.items())]
    context = [f"check `{escape(o.check)}`", f"incident {n.fingerprint[:12]}", *links]
    blocks.append(
        {
            "type": "context",
            "elements": [{"type": "mrkdwn", "text": _limit(" · ".join(context), 3000)}],
        }
    )
    return blocks


def reply_text(n: Notification) -> str:
    state = "RESOLVED" if n.resolved else n.level.name
    lines = [f"{LEVEL_EMOJI[state]} {escape(headline(n))}"]
    if not n.resolved and n.outcome.failing_keys:
        lines.append("Failing keys: " + escape(", ".join(map(str, n.outcome.failing_keys[:10]))))
    return "\n".join(lines)


@dataclass(frozen=True)
class SlackCall:
    method: str  # chat.postMessage | chat.update
    args: dict[str, object]


def slack_calls(n: Notification, thread: Thread, channel: str) -> list[SlackCall]:
    """The Web API calls for `n` given what the thread already holds (pure)."""
    root = {
        "text": escape(f"{title(n)}: {headline(n)}"),  # the notification text: mrkdwn too
        "blocks": root_blocks(n),
        "unfurl_links": False,
        "unfurl_media": False,
    }
    if "ts" not in thread:  # first notification of the incident (or its root never landed)
        return [SlackCall("chat.postMessage", {"channel": channel, **root})]
    where = {"channel": thread["channel"]}
    reply = {**where, "thread_ts": thread["ts"], "text": reply_text(n)}
    if n.reason is NotifyReason.LEVEL_RAISED:
        reply["reply_broadcast"] = True
    return [
        SlackCall("chat.postMessage", reply),
        SlackCall("chat.update", {**where, "ts": thread["ts"], **root}),
    ]


class SlackReceiver:
    """Posts to `channel` with the bot token in the environment variable `token_env`.
    `base_url` points at another Web API endpoint (tests, proxies)."""

    def __init__(
        self,
        name: str,
        channel: str,
        *,
        token_env: str = "SLACK_BOT_TOKEN",
        base_url: str | None = None,
        timeout_s: float = 30.0,
    ) -> None:
        self.name = name
        self.channel = channel
        self.token_env = env_name("token_env", token_env, owner=f"Slack receiver {name!r}")
        self.base_url = base_url
        self.timeout_s = timeout_s
        self._client: object | None = None

    def _web_client(self):  # type: ignore[no-untyped-def]
        from slack_sdk import WebClient

        if self._client is None:
            token = secret_from_env(self.token_env, what="Slack token")
            # Retries are the delivery stage's: no hidden sleeps in the client.
            self._client = WebClient(
                token=token,
                base_url=self.base_url or WebClient.BASE_URL,
                timeout=int(self.timeout_s),
                retry_handlers=[],
            )
        return self._client

    def send(self, notification: Notification, thread: Thread, steps_done: int) -> Delivery:
        from slack_sdk.errors import SlackApiError

        state = dict(thread)
        step = steps_done
        try:
            client = self._web_client()
        except LookupError as exc:
            return Delivery(ok=False, steps_done=step, error=str(exc))
        while True:
            calls = slack_calls(notification, state, self.channel)
            if step >= len(calls):
                return Delivery(ok=True, steps_done=step, thread=state)
            call = calls[step]
            try:
                response = client.api_call(call.method, json=call.args)
            except SlackApiError as exc:
                return _failure(exc, step, state)
            except Exception as exc:  # connection refused, reset, timeout, a garbled answer
                return Delivery(
                    ok=False,
                    steps_done=step,
                    thread=state,
                    retryable=True,
                    error=f"Slack unreachable: {type(exc).__name__}: {exc}",
                )
            if "ts" not in state and call.method == "chat.postMessage":
                # the root exists now, and with it the thread: a NEW notification is complete
                state = {"channel": response["channel"], "ts": response["ts"]}
                return Delivery(ok=True, steps_done=1, thread=state)
            step += 1


def _failure(exc: Exception, step: int, state: Thread) -> Delivery:
    response = getattr(exc, "response", None)
    status = getattr(response, "status_code", None)
    error = response.get("error") if response is not None else None  # type: ignore[union-attr]
    headers = getattr(response, "headers", {}) or {}
    retry_after = next((v for k, v in headers.items() if k.lower() == "retry-after"), None)
    retryable = (
        status == 429 or (status is not None and status >= 500) or (error in RETRYABLE_ERRORS)
    )
    return Delivery(
        ok=False,
        steps_done=step,
        thread=state,
        retryable=retryable,
        retry_after_s=float(retry_after) if retry_after is not None else None,
        error=f"Slack answered {status}: {error or 'error'}",
    )
