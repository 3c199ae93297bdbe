"""PagerDuty Events API v2: trigger while an incident fires, acknowledge when a person does,
resolve when it passes, with the incident fingerprint as `dedup_key` so PagerDuty keeps one
alert per incident."""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from dataclasses import asdict

from alerting.model import PAGE_LINK, Notification, NotifyReason
from alerting.receivers.base import Delivery, Thread, retry_after_seconds
from alerting.render import group_text, headline, linkable, title
from checkers.env_secrets import env_name, unset_variable
from checkers.levels import AlertLevel

EVENTS_URL = "https://events.pagerduty.com/v2/enqueue"
SEVERITY = {
    AlertLevel.OK: "info",
    AlertLevel.WARNING: "warning",
    AlertLevel.ERROR: "error",
    AlertLevel.CRITICAL: "critical",
}


def incident_dedup_key(fingerprint: str, installation: str = "") -> str:
    """PagerDuty's key of the alert of an incident: one per fingerprint and installation (two
    installations sharing a service keep apart)."""
    return f"dq-{installation[:12]}-{fingerprint}" if installation else f"dq-{fingerprint}"


def dedup_key(n: Notification, thread: Thread | None = None) -> str:
    """The incident's key: the one its first event used (kept in the thread: an incident
    opened before its database had an installation id keeps its key), else `n`'s, or its
    group's: a group pages once (alerting.grouping)."""
    known = (thread or {}).get("dedup_key")
    return (
        known
        if isinstance(known, str)
        else incident_dedup_key(n.thread_fingerprint or n.fingerprint, n.installation)
    )


def pagerduty_event(
    n: Notification, routing_key: str, thread: Thread | None = None
) -> dict[str, object] | None:
    """The Events API v2 body for `n` (pure); None for a note PagerDuty has no event for (the
    checks an inhibition holds back: the incident already pages once; a snooze, which holds
    back dq's notifications, not the page), and for the resolve of a
    group's incident while others of the group are open."""
    if n.reason in (NotifyReason.ALSO_FAILING, NotifyReason.SNOOZED):
        return None
    if n.resolved and n.group_open:  # the group's alert resolves with its last open incident
        return None
    if n.resolved:
        return {
            "routing_key": routing_key,
            "dedup_key": dedup_key(n, thread),
            "event_action": "resolve",
        }
    if n.reason is NotifyReason.ACKNOWLEDGED:
        return {
            "routing_key": routing_key,
            "dedup_key": dedup_key(n, thread),
            "event_action": "acknowledge",
        }
    o = n.outcome
    return {
        "routing_key": routing_key,
        "dedup_key": dedup_key(n, thread),
        "event_action": "trigger",
        "payload": {
            "summary": f"{title(n)}: {headline(n)}{group_text(n)}"[:1024],
            "source": f"dq-checkers:{o.check}",
            "severity": SEVERITY[n.level],
            "timestamp": n.created_at.isoformat(),
            "component": o.check,
            "group": o.owner or "data-quality",
            "class": "data-quality",
            "custom_details": {
                "description": o.description,
                "failing": o.failing,
                "total": o.total,
                "share": round(o.share, 6),
                "tolerance": o.tolerance,
                "level_reason": o.level_reason,
                "error": o.error,
                "failing_keys": list(o.failing_keys[:20]),
                "failing_keys_distinct": o.failing_keys_distinct,
                "excused": o.excused,
                "sample": list(o.sample[:5]),
                "failing_runs": n.failing_runs,
                **({"group": [asdict(m) for m in n.members[:50]]} if n.members else {}),
            },
        },
        "links": [
            {"href": url, "text": label}
            for label, url in sorted(n.links.items())
            if linkable(url)  # no javascript: or data: link in the incident
        ],
        "client": "dq-checkers",
        **_client_url(n),
    }


def _client_url(n: Notification) -> dict[str, str]:
    """PagerDuty's "view in client" link: the incident's page on `dq serve`, when it has one."""
    page = n.links.get(PAGE_LINK)
    return {"client_url": page} if page and linkable(page) else {}


class PagerDutyReceiver:
    """Sends to the service whose Events API v2 routing key is in `routing_key_env`, up to
    `concurrent_sends` events at once (a repeat is harmless: PagerDuty collapses it by
    dedup_key)."""

    concurrent_sends = 4

    def __init__(
        self,
        name: str,
        *,
        routing_key_env: str = "PAGERDUTY_ROUTING_KEY",
        url: str = EVENTS_URL,
        timeout_s: float = 30.0,
    ) -> None:
        self.name = name
        self.routing_key_env = env_name(
            "routing_key_env", routing_key_env, owner=f"PagerDuty receiver {name!r}"
        )
        self.url = url
        self.timeout_s = timeout_s

    def send(
        self, notification: Notification, thread: Thread, step: int, *, in_flight: bool = False
    ) -> Delivery:
        # one step; a repeat carries the same dedup_key, which PagerDuty collapses
        key = os.environ.get(self.routing_key_env)
        if not key:
            return Delivery(
                ok=False,
                error=f"{unset_variable('routing_key_env', 'PagerDuty routing key')} is not set",
            )
        event = pagerduty_event(notification, key, thread)
        if event is None:
            return Delivery(
                ok=True, steps_done=1, thread={"dedup_key": dedup_key(notification, thread)}
            )
        body = json.dumps(event).encode()
        request = urllib.request.Request(
            self.url, data=body, method="POST", headers={"Content-Type": "application/json"}
        )
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
                status = response.status
        except urllib.error.HTTPError as exc:
            retry_after = exc.headers.get("Retry-After") if exc.headers else None
            return Delivery(
                ok=False,
                retryable=exc.code == 429 or exc.code >= 500,
                retry_after_s=retry_after_seconds(retry_after),
                error=f"PagerDuty answered {exc.code}",
            )
        except OSError as exc:
            return Delivery(
                ok=False, retryable=True, in_doubt=True, error=f"PagerDuty unreachable: {exc}"
            )
        ok = 200 <= status < 300
        return Delivery(
            ok=ok,
            steps_done=int(ok),
            thread={"dedup_key": dedup_key(notification, thread)},
            retryable=not ok,
            error=None if ok else f"PagerDuty answered {status}",
        )
