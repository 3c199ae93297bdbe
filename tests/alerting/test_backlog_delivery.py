"""5,000 open incidents at once (issue 28, acceptance 2), CRITICAL, ERROR and WARNING in turn,
against the loopback stand-ins: PagerDuty answers at once and pages CRITICAL, Slack takes one
post a second and hears of every level. Two ticks' delivery (the default 60 s budget each) page
every CRITICAL once, in order of urgency, while Slack gets one digest of the ERROR and WARNING
notices instead of a 3,333-post queue. Delivery leases rows in batches and writes each step in
the transaction that begins the next, so the run spends its budget on receivers, not commits."""

from __future__ import annotations

import datetime as dt

import pytest
import sqlalchemy as sa

from alerting import deliver_pending
from alerting.model import Notification
from alerting.tables import notifications
from checkers import AlertLevel
from scheduling.schema import project_database
from tests.alerting.backlog import seed_open_incidents
from tests.alerting.conftest import T0
from tests.alerting.deliverers import database

COUNT = 5000
ROUTES = {"pagerduty": AlertLevel.CRITICAL, "slack": AlertLevel.WARNING}


@pytest.mark.parametrize("kind", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def test_every_critical_of_5000_open_incidents_pages_within_two_ticks(
    kind, tmp_path, paced_slack, slack, pagerduty
):
    receivers = paced_slack
    with database(kind, tmp_path) as url:
        engine = project_database(url)
        try:
            opened = seed_open_incidents(engine, COUNT, ROUTES, T0)
            for tick in range(2):
                deliver_pending(engine, receivers, T0 + dt.timedelta(minutes=15 * tick))
            with engine.connect() as connection:
                found = connection.execute(
                    sa.select(
                        notifications.c.receiver, notifications.c.status, notifications.c.payload
                    )
                ).all()
        finally:
            engine.dispose()
    criticals = opened[AlertLevel.CRITICAL]
    assert criticals == 1667
    paged = [status for receiver, status, _ in found if receiver == "pagerduty"]
    assert paged == ["sent"] * criticals  # every CRITICAL told within two ticks
    keys = [event["dedup_key"] for event in pagerduty.events]
    assert len(keys) == len(set(keys)) == criticals  # each once
    assert {e["payload"]["severity"] for e in pagerduty.events} == {"critical"}
    chat = [(status, payload) for receiver, status, payload in found if receiver == "slack"]
    assert len(chat) == COUNT  # nothing dropped
    grouped = [payload for status, payload in chat if status == "grouped"]
    [digest] = [
        Notification.from_json(payload)
        for status, payload in chat
        if status != "grouped" and '"members": [{' in payload
    ]
    assert len(digest.members) == len(grouped) == COUNT - criticals - 1
    assert digest.level is AlertLevel.ERROR  # the most urgent of the folded ones leads
    assert {m.level for m in digest.members} == {"ERROR", "WARNING"}  # never a CRITICAL
    posted = [m for m in slack.messages if m.thread_ts is None]
    assert posted and all("CRITICAL" in m.text for m in posted)  # most urgent first
