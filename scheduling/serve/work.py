"""What `dq serve` does after it answered Slack: the triage action on the project database
(alerting.triage: state, event log and outbox rows in one transaction), then one delivery of the
outbox, so the thread reply, the root edit and PagerDuty's acknowledge go out at once; and the
person who acted hears of a refusal (an unknown or already resolved incident) by an ephemeral
message on the interaction's response_url."""

from __future__ import annotations

import datetime as dt
import json
import logging
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from urllib.parse import urlparse

from sqlalchemy.engine import Engine

from alerting import RetryPolicy, deliver_pending
from alerting.receivers import Receiver
from alerting.triage import (
    ActionResult,
    Actor,
    UnknownIncident,
    acknowledge,
    load_incident,
    mark_expected,
    snooze,
)
from checkers.project_db.clock import utc_now
from scheduling.serve.interactions import ActionRequest, ExpectedSubmission, SlackUser
from scheduling.serve.modal import SlackApi, expected_view

log = logging.getLogger(__name__)

__all__ = ["Triage"]


def _actor(user: SlackUser) -> Actor:
    return Actor(user.id, user.name, "slack")


@dataclass(frozen=True)
class Triage:
    """The project `dq serve` acts on: its database, receivers and Slack API."""

    engine: Engine
    receivers: Mapping[str, Receiver]
    delivery: RetryPolicy
    slack: SlackApi | None
    clock: Callable[[], dt.datetime] = utc_now

    def deliver(self) -> None:
        """Send what the actions enqueued (leases keep concurrent deliverers apart)."""
        report = deliver_pending(self.engine, self.receivers, self.clock(), retry=self.delivery)
        if report.pending:
            log.info("%d notification(s) left for a later delivery", len(report.pending))

    def act(self, request: ActionRequest) -> ActionResult | None:
        """A button: acknowledge, snooze, or open the "expected" modal (runbook is a link)."""
        now, actor = self.clock(), _actor(request.user)
        key = request.request_key
        try:
            if request.action == "acknowledge":
                result = acknowledge(
                    self.engine, request.incident_id, actor, now=now, request_key=key
                )
            elif request.action == "snooze":
                assert request.snooze_for is not None
                result = snooze(
                    self.engine,
                    request.incident_id,
                    actor,
                    duration=request.snooze_for,
                    now=now,
                    request_key=key,
                )
            else:
                if request.action == "expected":
                    self.open_expected(request)
                return None
        except (UnknownIncident, ValueError) as exc:
            respond(request.response_url, str(exc))
            return None
        except Exception as exc:  # the database down, a bug: said, not swallowed
            log.exception("%s of incident %s failed", request.action, request.incident_id)
            respond(request.response_url, f"dq could not {request.action}: {type(exc).__name__}")
            return None
        self.after(result, request.response_url, confirm=request.confirm)
        return result

    def open_expected(self, request: ActionRequest) -> None:
        if self.slack is None or request.trigger_id is None:
            respond(request.response_url, "dq serve has no Slack bot token to open the form")
            return
        with self.engine.connect() as connection:
            try:
                incident = load_incident(connection, request.incident_id)
            except UnknownIncident as exc:
                respond(request.response_url, str(exc))
                return
        if not incident.open:
            respond(request.response_url, f"Incident {request.incident_id} is already resolved")
            return
        keys = bool(incident.last_outcome.failing_keys)  # only then can they be known broken
        view = expected_view(request.incident_id, incident.check, offer_known_broken=keys)
        self.slack.open_view(request.trigger_id, view)

    def submit_expected(self, submission: ExpectedSubmission) -> ActionResult | None:
        try:
            result = mark_expected(
                self.engine,
                submission.incident_id,
                _actor(submission.user),
                now=self.clock(),
                reason=submission.reason,
                known_broken_for=submission.known_broken_for,
                request_key=submission.request_key,
            )
        except (UnknownIncident, ValueError) as exc:
            log.warning("expected for incident %s refused: %s", submission.incident_id, exc)
            return None
        except Exception:  # the database down, a bug: logged; the incident stays open
            log.exception("expected for incident %s failed", submission.incident_id)
            return None
        self.after(result, None)
        return result

    def after(
        self, result: ActionResult, response_url: str | None, *, confirm: bool = False
    ) -> None:
        if result.changed:
            self.deliver()
        if confirm or not result.changed:
            respond(response_url, result.message)


def respond(response_url: str | None, text: str, *, timeout_s: float = 10.0) -> None:
    """An ephemeral message to the person who acted (Slack's response_url, from the signed
    request; http(s) only)."""
    if not response_url or urlparse(response_url).scheme not in ("https", "http"):
        return
    body = json.dumps({"response_type": "ephemeral", "replace_original": False, "text": text})
    request = urllib.request.Request(
        response_url,
        data=body.encode(),
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout_s):
            pass
    except OSError as exc:
        log.warning("could not answer on the response_url: %s", type(exc).__name__)
