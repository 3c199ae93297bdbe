"""`dq serve` as a real process on loopback, on SQLite and PostgreSQL, with the Slack and PagerDuty
stand-ins: a signed `acknowledge` click acknowledges the incident and tells Slack and PagerDuty,
and escalation over time stops; unsigned, stale and altered requests are 401 and change nothing;
a retried request changes nothing twice; snooze 1 h and "this is expected" through the server;
the `/dq` command; the JSON API."""

from __future__ import annotations

import datetime as dt
import json
import re
import shutil
from urllib.parse import urlencode

import pytest
import sqlalchemy as sa
from playwright.sync_api import expect, sync_playwright

from alerting import deliver_pending, handle_outcome
from alerting.model import RUNBOOK_LINK
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
    response_urls,
    serve_env,
    view_submission,
)

ANA = ("U024BE7LH", "ana")
RUNBOOK = "https://wiki.example.com/runbooks/orders"
HOSTILE = "<script>document.title='pwned'</script><img src=x onerror=alert(1)>"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
KINDS = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]


class Stand:
    def __init__(self, server, engine, slack, pagerduty, http, hook):
        self.server, self.engine, self.slack, self.pagerduty = server, engine, slack, pagerduty
        self.http = http
        self.hook, self.answered = hook  # Slack's response_url and what dq serve posted to it
        self.receivers = receivers(http)
        self.t0 = utc_now()  # the server acts on the real clock; the runs are placed around it

    def told(self, check: str, **changes: object) -> tuple[int, object]:
        """A failing check's incident (its check declares a runbook), told: its id and Slack
        root message."""
        recorded = handle_outcome(
            self.engine,
            outcome(E, check=check, **changes),
            POLICY,
            self.t0,
            links={RUNBOOK_LINK: RUNBOOK},
        )
        deliver_pending(self.engine, self.receivers, self.t0)
        # the server's delivery after an earlier action may be the one that sends them
        [root] = wait_for(lambda: [m for m in self.slack.roots() if check in m.text], "the root")
        return recorded.incident.id, root

    def trigger(self, check: str) -> dict:
        [event] = wait_for(
            lambda: [e for e in self.pagerduty.events if check in json.dumps(e)], "the trigger"
        )
        return event

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
            response_url=self.hook,
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
        response_urls() as hook,
        fresh_database(request.param, directory) as url,
    ):
        engine = project_database(url)  # migrated before the server opens it
        monkey = pytest.MonkeyPatch()
        monkey.setenv("SLACK_BOT_TOKEN", SLACK_TOKEN)
        monkey.setenv("PAGERDUTY_ROUTING_KEY", "R0UTINGKEY0000000000000000000000")
        try:
            with dq_serve(serve_env(directory, url, http), directory) as server:
                yield Stand(server, engine, slack, pagerduty, http, hook)
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
    trigger = stand.trigger("orders_acknowledged")
    assert set(buttons(root)) == {"acknowledge", "snooze", "expected", "runbook"}
    value = buttons(root)["acknowledge"]["value"]

    answer = stand.click("acknowledge", value, root, action_ts="1700000001.000001")
    assert answer.status_code == 200  # answered; the work follows

    wait_for(
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
    assert set(buttons(root)) == {"snooze", "expected", "runbook"}  # nothing left to acknowledge
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


def slack_calls(stand) -> int:
    return len(stand.slack.calls)


def test_unsigned_stale_and_altered_requests_are_refused_and_change_nothing(stand):
    incident_id, root = stand.told("orders_refused")
    value = buttons(root)["acknowledge"]["value"]
    calls, events = slack_calls(stand), len(stand.pagerduty.events)
    form = block_actions(
        "acknowledge",
        value,
        user=ANA,
        message_ts=root.ts,
        response_url=stand.hook,
        action_ts="1700000002.000001",
    )
    forged = {**form, "payload": form["payload"].replace(value, str(incident_id + 1000))}
    answers = [
        stand.server.post_signed("/slack/actions", form, secret="not-the-signing-secret"),
        stand.server.post_signed("/slack/actions", form, age_s=6 * 60),
        # a valid signature replayed on a changed body
        stand.server.post_signed("/slack/actions", form, body=urlencode(forged).encode()),
        stand.server.post_signed(
            "/slack/commands", {"text": f"ack {incident_id}", "user_id": ANA[0]}, age_s=6 * 60
        ),
    ]
    assert [a.status_code for a in answers] == [401, 401, 401, 401]
    huge = stand.server.post_signed("/slack/actions", {**form, "padding": "x" * (1 << 20)})
    assert huge.status_code == 413  # even signed: more than Slack ever sends
    assert stand.incident(incident_id)["acknowledged_at"] is None
    assert stand.events(incident_id) == []
    assert slack_calls(stand) == calls and len(stand.pagerduty.events) == events


def test_a_retried_or_double_clicked_request_acts_once(stand):
    incident_id, root = stand.told("orders_retried")
    trigger = stand.trigger("orders_retried")
    value = buttons(root)["acknowledge"]["value"]
    answered = len(stand.answered)
    first = stand.click("acknowledge", value, root, action_ts="1700000003.000001")
    retried = stand.click(
        "acknowledge",
        value,
        root,
        action_ts="1700000003.000001",
        headers={"X-Slack-Retry-Num": "1", "X-Slack-Retry-Reason": "http_timeout"},
    )
    second_click = stand.click("acknowledge", value, root, action_ts="1700000003.000002")
    assert [a.status_code for a in (first, retried, second_click)] == [200, 200, 200]
    wait_for(lambda: stand.slack.replies(root), "the acknowledgement in the thread")
    # each repeat is answered to the person (and only then is all the work done)
    wait_for(lambda: len(stand.answered) == answered + 2, "both repeats answered")
    assert all("cknowledged" in m["text"] for m in stand.answered[answered:])
    assert len(stand.events(incident_id)) == 1
    assert len(stand.slack.replies(root)) == 1
    acks = [
        e
        for e in stand.pagerduty.events
        if e["event_action"] == "acknowledge" and e["dedup_key"] == trigger["dedup_key"]
    ]
    assert len(acks) == 1


def test_snooze_an_hour_through_the_server(stand):
    check = "orders_snoozed"
    incident_id, root = stand.told(check)
    answer = stand.click(
        "snooze", snooze_value(root, incident_id, "1h"), root, action_ts="1700000004.000001"
    )
    assert answer.status_code == 200
    [event] = wait_for(lambda: stand.events(incident_id), "the snooze recorded")
    assert event.action == "snooze" and event.actor_name == "ana"
    told = len(stand.slack.messages)
    stand.run(check, E, stand.t0 + dt.timedelta(minutes=30))  # inside the hour: held back
    # only the snooze's own line went out meanwhile (a reply in the thread)
    assert ["Snoozed" in m.text for m in stand.slack.messages[told:]] in ([], [True])
    stand.run(check, None, stand.t0 + 2 * HOUR)  # after it: the recovery goes out
    wait_for(
        lambda: any("Resolved" in reply.text for reply in stand.slack.replies(root)),
        "the recovery in the thread",
    )


def test_expected_opens_the_modal_and_its_submission_resolves(stand):
    incident_id, root = stand.told("orders_expected")
    value = buttons(root)["expected"]["value"]
    assert stand.click("expected", value, root, action_ts="1700000005.000001").status_code == 200
    [view] = wait_for(
        lambda: [v for v in stand.slack.views if v["private_metadata"] == str(incident_id)],
        "views.open with the expected modal",
    )
    assert view["trigger_id"].endswith("1700000005.000001")
    assert [b.get("block_id") for b in view["blocks"]][1:] == ["reason", "known_broken"]
    values = {
        "reason": {"reason_input": {"type": "plain_text_input", "value": "planned backfill"}},
        "known_broken": {
            "known_broken_for": {"type": "static_select", "selected_option": {"value": "no"}}
        },
    }
    form = view_submission(view, user=ANA, values=values)
    assert stand.server.post_signed("/slack/actions", form).status_code == 200
    wait_for(lambda: stand.incident(incident_id)["status"] == "resolved", "the resolution")
    incident = stand.incident(incident_id)
    assert incident["resolved_as"] == "expected"
    assert incident["resolution_note"] == "planned backfill"
    wait_for(
        lambda: any("planned backfill" in r.text for r in stand.slack.replies(root)),
        "the resolution in the thread",
    )
    [event] = stand.events(incident_id)
    assert (event.action, event.actor_name) == ("expected", "ana")


def test_the_dq_command(stand):
    incident_id, _ = stand.told("orders_commanded")
    command = {"command": "/dq", "user_id": ANA[0], "user_name": "ana", "trigger_id": "9.9.9"}
    helped = stand.server.post_signed("/slack/commands", {**command, "text": "help"})
    assert helped.status_code == 200 and "/dq status CHECK" in helped.json()["text"]
    status = stand.server.post_signed(
        "/slack/commands", {**command, "text": "status orders_commanded"}
    )
    assert f"Incident {incident_id}" in status.json()["text"]
    wrong = stand.server.post_signed("/slack/commands", {**command, "text": "ack twelve"})
    assert "incident number" in wrong.json()["text"]
    acked = stand.server.post_signed(
        "/slack/commands",
        {**command, "text": f"ack {incident_id}", "response_url": stand.hook},
    )
    assert acked.json()["text"] == f"Acknowledging incident {incident_id}…"
    wait_for(
        lambda: any(m["text"] == "Acknowledged by @ana" for m in stand.answered),
        "the command's result on its response_url",
    )
    assert stand.incident(incident_id)["acknowledged_by_name"] == "ana"
    [event] = stand.events(incident_id)
    assert event.action == "acknowledge"

    nothing = stand.server.post_signed("/slack/commands", {**command, "text": "snooze nope 4h"})
    assert nothing.json()["text"] == "`nope` has no open incident to snooze."
    snoozing = stand.server.post_signed(
        "/slack/commands",
        {**command, "text": "snooze orders_commanded 4h", "trigger_id": "9.9.10"},
    )
    assert snoozing.json()["text"] == f"Snoozing incident {incident_id}…"
    wait_for(lambda: len(stand.events(incident_id)) == 2, "the snooze")
    assert stand.events(incident_id)[1].action == "snooze"


def test_the_api_lists_open_incidents(stand):
    incident_id, _ = stand.told("orders_listed")
    answer = stand.server.get("/api/incidents")
    assert answer.status_code == 200
    [listed] = [i for i in answer.json()["incidents"] if i["id"] == incident_id]
    assert listed["check"] == "orders_listed" and listed["level"] == "ERROR"
    assert listed["runbook"] == RUNBOOK
    page = stand.server.get("/checks/orders_listed")
    assert page.status_code == 200 and "<h1>orders_listed</h1>" in page.text
    assert "default-src 'none'" in page.headers["content-security-policy"]
    assert stand.server.get("/incidents/999999").status_code == 404
    assert stand.server.get("/checks/no_such_check").status_code == 404


@pytest.fixture(scope="module")
def browser():
    assert CHROMIUM is not None, "headless Chromium is missing: `make test` installs it"
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM)
        yield launched
        launched.close()


def test_the_live_page_in_a_browser(stand, browser, tmp_path):
    acknowledged, root = stand.told("orders_on_the_page", owner=HOSTILE)
    stand.click("acknowledge", str(acknowledged), root, action_ts="1700000006.000001")
    snoozed, other = stand.told("orders_snoozed_on_the_page")
    stand.click("snooze", f"{snoozed}:4h", other, action_ts="1700000006.000002")
    wait_for(lambda: stand.events(acknowledged) and stand.events(snoozed), "both actions")

    context = browser.new_context(viewport={"width": 1280, "height": 900})
    requested: list[str] = []
    context.route("**/*", lambda route: (requested.append(route.request.url), route.continue_()))
    page = context.new_page()
    said: list[str] = []
    page.on("console", lambda m: said.append(m.text) if m.type in ("error", "warning") else None)
    page.on("pageerror", lambda error: said.append(str(error)))
    page.on("dialog", lambda dialog: (said.append(dialog.message), dialog.dismiss()))
    page.goto(stand.server.url + "/")

    row = page.locator(f'#incidents tr[data-incident="{acknowledged}"]')
    expect(row.locator("td.ack")).to_contain_text("@ana")
    expect(row).to_contain_text(HOSTILE)  # the owner, shown as text
    expect(page.locator(f'#incidents tr[data-incident="{snoozed}"] td.snooze')).not_to_be_empty()
    expect(page.locator("#filters")).to_be_visible()  # the report's script ran (CSP allowed it)
    timeline = page.locator('section.check:has-text("orders_on_the_page") li.person')
    expect(timeline).to_have_text(re.compile(r"Acknowledged by @ana, from slack$"))
    assert page.title() == "dq-checkers: incidents"
    assert page.evaluate("document.scripts.length") == 2 and page.locator("img").count() == 0
    shot = tmp_path / "incidents.png"
    page.screenshot(path=shot, full_page=True)
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 30_000

    row.locator("td a").first.click()  # the incident's own page
    expect(page.locator("#events")).to_contain_text("Acknowledged by @ana")
    expect(page.locator("h1")).to_have_text(f"Incident {acknowledged}: orders_on_the_page")
    context.close()
    assert said == []
    assert requested and all(url.startswith(stand.server.url + "/") for url in requested)
