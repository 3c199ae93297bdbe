"""`dq serve` as a real process on loopback, on SQLite and PostgreSQL, with the Slack and PagerDuty
stand-ins: a signed `acknowledge` click acknowledges the incident and tells Slack and PagerDuty,
and escalation over time stops; unsigned, stale and altered requests are 401 and change nothing;
a retried request changes nothing twice; snooze 1 h and "this is expected" through the server;
the `/dq` command; the JSON API."""

from __future__ import annotations

import datetime as dt
import json

import pytest
import sqlalchemy as sa

from alerting import deliver_pending, handle_outcome
from alerting.tables import incidents, notifications
from alerting.triage import incident_events
from checkers.project_db.clock import utc_now
from scheduling.schema import project_database
from tests.alerting.conftest import SLACK_TOKEN, outcome
from tests.alerting.servers import PagerDutyStandIn, SlackStandIn, http_server
from tests.polling import wait_for
from tests.scheduling.databases import fresh_database
from tests.scheduling.serve_stand import (
    HOUR,
    POLICY,
    E,
    block_actions,
    dq_serve,
    receivers,
    serve_env,
    view_submission,
)

ANA = ("U024BE7LH", "ana")
KINDS = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]


class Stand:
    def __init__(self, server, engine, slack, pagerduty, http):
        self.server, self.engine, self.slack, self.pagerduty = server, engine, slack, pagerduty
        self.http = http
        self.receivers = receivers(http)
        self.t0 = utc_now()  # the server acts on the real clock; the runs are placed around it

    def told(self, check: str, **changes: object) -> tuple[int, object]:
        """A failing check's incident, told: its id and Slack root message."""
        recorded = handle_outcome(self.engine, outcome(E, check=check, **changes), POLICY, self.t0)
        deliver_pending(self.engine, self.receivers, self.t0)
        [root] = [m for m in self.slack.roots() if check in m.text]
        return recorded.incident.id, root

    def run(self, check: str, level, at: dt.datetime):
        recorded = handle_outcome(self.engine, outcome(level, check=check), POLICY, at)
        deliver_pending(self.engine, self.receivers, at)
        return recorded

    def click(self, action_id: str, value: str, root, *, action_ts: str, **options):
        form = block_actions(
            action_id,
            value,
            user=ANA,
            message_ts=root.ts,
            response_url=f"{self.http}/hooks/response",
            action_ts=action_ts,
        )
        return self.server.post_signed("/slack/actions", form, **options)

    def incident(self, incident_id: int) -> dict:
        with self.engine.connect() as connection:
            row = connection.execute(sa.select(incidents).where(incidents.c.id == incident_id))
            return dict(row.mappings().one())

    def events(self, incident_id: int):
        with self.engine.connect() as connection:
            return incident_events(connection, incident_id)


@pytest.fixture(scope="module", params=KINDS)
def stand(request, tmp_path_factory):
    directory = tmp_path_factory.mktemp("serve")
    slack, pagerduty = SlackStandIn(SLACK_TOKEN), PagerDutyStandIn()
    with (
        http_server(slack, pagerduty) as http,
        fresh_database(request.param, directory) as url,
    ):
        engine = project_database(url)  # migrated before the server opens it
        monkey = pytest.MonkeyPatch()
        monkey.setenv("SLACK_BOT_TOKEN", SLACK_TOKEN)
        monkey.setenv("PAGERDUTY_ROUTING_KEY", "R0UTINGKEY0000000000000000000000")
        try:
            with dq_serve(serve_env(directory, url, http), directory) as server:
                yield Stand(server, engine, slack, pagerduty, http)
        finally:
            monkey.undo()
            engine.dispose()


def buttons(message) -> dict[str, dict]:
    return {
        element["action_id"]: element
        for block in message.blocks
        if block.get("type") == "actions"
        for element in block.get("elements", [])
    }


def snooze_value(root, incident_id: int, duration: str) -> str:
    """The value the root's snooze menu sends for `duration`."""
    element = buttons(root)["snooze"]
    values = [o["value"] for o in element.get("options", [])] or [element.get("value", "")]
    return next(v for v in values if v.endswith(f":{duration}") and v.startswith(f"{incident_id}:"))


def test_acknowledge_from_the_root_message(stand):
    incident_id, root = stand.told("orders_acknowledged")
    [trigger] = [e for e in stand.pagerduty.events if "orders_acknowledged" in json.dumps(e)]
    assert set(buttons(root)) == {"acknowledge", "snooze", "expected", "runbook"}
    value = buttons(root)["acknowledge"]["value"]

    answer = stand.click("acknowledge", value, root, action_ts="1700000001.000001")
    assert answer.status_code == 200  # answered; the work follows

    [ack] = wait_for(
        lambda: [
            e
            for e in stand.pagerduty.events
            if e["event_action"] == "acknowledge" and e["dedup_key"] == trigger["dedup_key"]
        ],
        "PagerDuty's acknowledge with the trigger's dedup_key",
    )
    incident = stand.incident(incident_id)
    assert incident["acknowledged_by_name"] == "ana" and incident["acknowledged_by_id"] == ANA[0]
    wait_for(lambda: root.edits and stand.slack.replies(root), "the thread reply and root edit")
    [reply] = stand.slack.replies(root)
    assert "Acknowledged by @ana" in reply.text
    assert "@ana" in json.dumps(root.blocks)  # the root shows who acknowledged
    [event] = stand.events(incident_id)
    assert (event.action, event.actor_name, event.source) == ("acknowledge", "ana", "slack")

    # two hours open would escalate to CRITICAL; acknowledged, it stays at ERROR
    later = stand.run("orders_acknowledged", E, stand.t0 + 2 * HOUR)
    assert later.incident.id == incident_id
    assert stand.incident(incident_id)["effective_level"] in (None, int(E))
    raised = [n for n in notifications_of(stand, incident_id) if n["reason"] == "level_raised"]
    assert raised == []


def notifications_of(stand, incident_id: int) -> list[dict]:
    with stand.engine.connect() as connection:
        rows = connection.execute(
            sa.select(notifications).where(notifications.c.incident_id == incident_id)
        )
        return [dict(r) for r in rows.mappings()]
