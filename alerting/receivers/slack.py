"""Slack through the Web API (bot token): one root message per incident, later notifications as
thread replies with the root edited to the current state, `reply_broadcast` when the level rises,
and the recovery in the thread; the root and the reply raising the level carry the triage buttons
(alerting.receivers.slack_actions). `slack_calls` is the pure payload builder."""

from __future__ import annotations

import logging
import math
import re
import urllib.parse
from dataclasses import dataclass

from alerting.model import RUNBOOK_LINK, Notification, NotifyReason
from alerting.receivers.base import Delivery, Thread, retry_after_seconds
from alerting.receivers.slack_actions import actions_block, carries_buttons
from alerting.render import (
    facts,
    group_text,
    headline,
    keys_text,
    linkable,
    member_lines,
    sample_text,
    title,
)
from checkers.env_secrets import env_name, secret_from_env

log = logging.getLogger(__name__)

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
    """Slack mrkdwn control characters (&, <, >) as entities, and a formatting mark (`*_~` and
    the backtick) that could open or close bold, italics, strike or code fenced by zero-width
    spaces, so a data value shows as written (mrkdwn has no backslash escape). Marks inside a
    word (`orders_have_customers`) format nothing and stay as they are."""
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _FORMATTING.sub(lambda m: f"\u200b{m.group()}\u200b", text)


def escape_code(text: str) -> str:
    """Text inside a code span or block: formatting marks mean nothing there."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


#: A formatting mark at a word's edge: where Slack may read it as formatting.
_FORMATTING = re.compile(r"(?<![A-Za-z0-9])[*_~`]|[*_~`](?![A-Za-z0-9])")


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
                    "text": _limit(
                        f"*Sample of failing elements*\n```{escape_code(table)}```", 3000
                    ),
                },
            }
        )
    links = [link(url, label) for label, url in sorted(n.links.items()) if label != RUNBOOK_LINK]
    context = [
        f"check `{escape_code(o.check).replace('`', chr(39))}`",
        f"incident {n.fingerprint[:12]}",
        *links,
    ]
    if n.acknowledged_by and not n.resolved:
        context.insert(0, f":eyes: Acknowledged by @{escape(n.acknowledged_by)}")
    blocks.append(
        {
            "type": "context",
            "elements": [{"type": "mrkdwn", "text": _limit(" · ".join(context), 3000)}],
        }
    )
    if n.members and not n.resolved:
        blocks.insert(3, _members_block(n))
    actions = actions_block(n)
    if actions is not None:
        blocks.append(actions)
    return blocks


def _members_block(n: Notification) -> dict[str, object]:
    """The group's other incidents, a line each: level, check and headline, link."""
    lines = []
    for level, text, url in member_lines(n):
        emoji = f"{LEVEL_EMOJI[level]} *{level}* " if level in LEVEL_EMOJI else ""
        lines.append(f"{emoji}{escape(text)}" + (f" · {link(url, 'incident')}" if url else ""))
    title = f"*Also opened in this run ({len(n.members)}):*"
    return {
        "type": "section",
        "text": {"type": "mrkdwn", "text": _limit("\n".join([title, *lines]), 3000)},
    }


def reply_text(n: Notification) -> str:
    if n.reason is NotifyReason.ACKNOWLEDGED:
        return f":eyes: {escape(n.note or 'Acknowledged')}"
    if n.reason is NotifyReason.ALSO_FAILING:
        return f":link: {escape(headline(n))}"
    if n.reason is NotifyReason.SNOOZED:
        return f":zzz: {escape(n.note or 'Snoozed')}"
    state = "RESOLVED" if n.resolved else n.level.name
    lines = [f"{LEVEL_EMOJI[state]} {escape(headline(n))}"]
    if not n.resolved and (n.outcome.failing_keys or n.outcome.failing_keys_distinct):
        lines.append("Failing keys: " + escape(keys_text(n.outcome)))
    return "\n".join(lines)


#: Messages searched for a post begun before a crash (conversations.history / .replies).
LOOKUP_LIMIT = 200
METADATA_EVENT = "dq_notification"


def message_metadata(n: Notification, step: int) -> dict[str, object]:
    """Slack message metadata naming the notification and step a post delivers (Slack has no
    idempotency key; this is how a retry recognises its own earlier post)."""
    return {"event_type": METADATA_EVENT, "event_payload": {"dedup_key": n.dedup_key, "step": step}}


@dataclass(frozen=True)
class SlackCall:
    method: str  # chat.postMessage | chat.update
    args: dict[str, object]


#: Notes that are a line in the thread and leave the root as it is.
LINE_ONLY = (NotifyReason.ALSO_FAILING, NotifyReason.SNOOZED)


def slack_calls(n: Notification, thread: Thread, channel: str) -> list[SlackCall]:
    """The Web API calls for `n` given what the thread already holds (pure)."""
    root = {
        "text": escape(f"{title(n)}: {headline(n)}{group_text(n)}"),  # mrkdwn too
        "blocks": root_blocks(n),
        "unfurl_links": False,
        "unfurl_media": False,
    }
    if "ts" not in thread:  # first notification of the incident (or its root never landed)
        return [SlackCall("chat.postMessage", {"channel": channel, **root})]
    where = {"channel": thread["channel"]}
    said = reply_text(n)
    reply: dict[str, object] = {**where, "thread_ts": thread["ts"], "text": said}
    if n.reason is NotifyReason.LEVEL_RAISED:
        reply["reply_broadcast"] = True
    if n.reason in LINE_ONLY or n.thread_incident_id is not None:
        # a line in the thread; the root (the inhibitor's, the group's, a snoozed one's) stays
        reply["text"] = escape(f"{n.outcome.check}: ") + said if n.thread_incident_id else said
        return [SlackCall("chat.postMessage", reply)]
    actions = actions_block(n) if carries_buttons(n) else None
    if actions is not None:
        text = {"type": "section", "text": {"type": "mrkdwn", "text": _limit(said, 3000)}}
        reply["blocks"] = [text, actions]
    return [
        SlackCall("chat.postMessage", reply),
        SlackCall("chat.update", {**where, "ts": thread["ts"], **root}),
    ]


class SlackReceiver:
    """Posts to `channel` with the bot token in the environment variable `token_env`.
    `base_url` points at another Web API endpoint (tests, proxies). `messages_per_second`: what
    Slack lets one channel take (about one); a backlog larger than a delivery run can send at
    that rate goes out as a digest (alerting.digest)."""

    def __init__(
        self,
        name: str,
        channel: str,
        *,
        token_env: str = "SLACK_BOT_TOKEN",
        base_url: str | None = None,
        timeout_s: float = 30.0,
        messages_per_second: float = 1.0,
    ) -> None:
        self.name = name
        self.channel = channel
        self.messages_per_second = messages_per_second
        self.token_env = env_name("token_env", token_env, owner=f"Slack receiver {name!r}")
        self.base_url = base_url
        self.timeout_s = timeout_s
        self._client: object | None = None

    def _web_client(self):
        from slack_sdk import WebClient

        if self._client is None:
            token = secret_from_env(self.token_env, what="Slack token", option="token_env")
            # Retries are the delivery stage's: no hidden sleeps in the client.
            self._client = WebClient(
                token=token,
                base_url=self.base_url or WebClient.BASE_URL,
                timeout=max(1, math.ceil(self.timeout_s)),  # the SDK takes whole seconds
                retry_handlers=[],
            )
        return self._client

    def send(
        self, notification: Notification, thread: Thread, step: int, *, in_flight: bool = False
    ) -> Delivery:
        """One Web API call: the root post of a new incident, or step 0 (the thread reply) or
        step 1 (the root edit) of a later notification. Posts carry message metadata naming the
        notification, so a post begun before a crash is found and adopted, not posted twice."""
        from slack_sdk.errors import SlackApiError

        state = dict(thread)
        try:
            client = self._web_client()
        except LookupError as exc:
            return Delivery(ok=False, steps_done=step, error=str(exc))
        calls = slack_calls(notification, state, self.channel)
        if step >= len(calls):
            return Delivery(ok=True, steps_done=step, thread=state)
        call = calls[step]
        posting = call.method == "chat.postMessage"
        try:
            found = self._find(client, notification, state, step) if in_flight and posting else None
            if found is not None:
                response = found
            else:
                args = dict(call.args)
                if posting:
                    args["metadata"] = message_metadata(notification, step)
                response = client.api_call(call.method, json=args)
        except SlackApiError as exc:
            return _failure(exc, step, state, in_doubt=in_flight)
        except Exception as exc:  # connection refused, reset, timeout, a garbled answer
            return Delivery(
                ok=False,
                steps_done=step,
                thread=state,
                retryable=True,
                in_doubt=True,  # the request may have reached Slack before the answer was lost
                error=f"Slack unreachable: {type(exc).__name__}: {exc}",
            )
        if "ts" not in state and posting:
            # the root exists now, and with it the thread: a NEW notification is complete
            state = {"channel": response["channel"], "ts": response["ts"]}
            return Delivery(ok=True, steps_done=1, thread=state)
        return Delivery(ok=True, steps_done=step + 1, thread=state, more=step + 1 < len(calls))

    def _find(
        self, client, notification: Notification, thread: Thread, step: int
    ) -> dict[str, object] | None:
        """The post of (`notification`, `step`) if Slack already has it: the latest
        LOOKUP_LIMIT messages of the channel (a root) or of the thread (a reply)."""
        from slack_sdk.errors import SlackApiError

        try:
            if "ts" in thread:
                found = client.conversations_replies(
                    channel=thread["channel"],
                    ts=thread["ts"],
                    limit=LOOKUP_LIMIT,
                    include_all_metadata=True,
                )
            else:
                found = client.conversations_history(
                    channel=self.channel, limit=LOOKUP_LIMIT, include_all_metadata=True
                )
        except SlackApiError as exc:
            if _failure(exc, step, thread, in_doubt=True).retryable:
                raise
            # a channel history the bot may not read: post again rather than lose the message
            log.warning("Slack lookup of an unconfirmed post failed (%s); posting it", exc)
            return None
        channel = str(thread.get("channel") or self.channel)
        wanted = message_metadata(notification, step)
        for message in found.get("messages") or []:
            if message.get("metadata") == wanted:
                return {"channel": channel, "ts": message["ts"]}
        return None


def _failure(exc: Exception, step: int, state: Thread, *, in_doubt: bool) -> Delivery:
    response = getattr(exc, "response", None)
    status = getattr(response, "status_code", None)
    error = response.get("error") if response is not None else None
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
        retry_after_s=retry_after_seconds(retry_after),
        error=f"Slack answered {status}: {error or 'error'}",
        in_doubt=in_doubt,  # Slack answered, so this call did nothing; an earlier one may have
    )
