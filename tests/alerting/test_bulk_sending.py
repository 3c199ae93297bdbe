"""Sending in bulk (issue 28): a delivery run sends its mails over one SMTP session (one
connection, one TLS handshake, one login) instead of one each, and ends it with the run; it
sends PagerDuty events four at a time. A transient refusal or a 429 still defers the receiver,
and nothing is sent twice."""

from __future__ import annotations

import datetime as dt
import threading

from alerting import EscalationPolicy, deliver_pending, handle_outcome
from checkers import AlertLevel
from tests.alerting.conftest import T0, outcome
from tests.alerting.scenarios import rows
from tests.polling import wait_for

MAIL = EscalationPolicy(routes={"email": AlertLevel.WARNING}, repeat_every=None)
PAGE = EscalationPolicy(routes={"pagerduty": AlertLevel.WARNING}, repeat_every=None)


def _open(engine, names: range, policy: EscalationPolicy = MAIL) -> None:
    for i in names:
        handle_outcome(engine, outcome(AlertLevel.ERROR, check=f"check_{i}"), policy, T0)


def test_a_run_sends_its_mails_over_one_connection(engine, receivers, smtp):
    _, mailbox = smtp
    email = {"email": receivers["email"]}
    _open(engine, range(6))
    assert deliver_pending(engine, email, T0).pending == []
    assert len(mailbox.messages) == 6 and all(mailbox.tls)
    assert len(set(mailbox.peers)) == 1  # one session for the run's six mails
    assert receivers["email"]._open is None  # closed with the run's share
    _open(engine, range(6, 8))
    assert deliver_pending(engine, email, T0 + dt.timedelta(minutes=1)).pending == []
    assert len(mailbox.messages) == 8
    assert len(set(mailbox.peers)) == 2  # the next run opens its own session


def test_a_transient_refusal_defers_the_rest_and_repeats_nothing(engine, receivers, smtp):
    _, mailbox = smtp
    email = {"email": receivers["email"]}
    _open(engine, range(5))
    mailbox.refusing = 1  # the first mail: 451, a backoff longer than a wait within the run
    assert len(deliver_pending(engine, email, T0).pending) == 5
    assert mailbox.messages == []
    assert all(r["next_attempt_at"] is not None for r in rows(engine))  # the receiver waits
    assert deliver_pending(engine, email, T0 + dt.timedelta(hours=2)).pending == []
    ids = [m["Message-ID"] for m in mailbox.messages]
    assert len(ids) == len(set(ids)) == 5  # each once, over the second run's one session
    assert len(set(mailbox.peers)) == 1


def test_pagerduty_events_go_out_four_at_a_time(engine, receivers, pagerduty):
    paging = {"pagerduty": receivers["pagerduty"]}
    _open(engine, range(10), PAGE)
    held = pagerduty.gates.add("enqueue:after", times=4)  # accepted, not yet answered
    run = threading.Thread(target=deliver_pending, args=(engine, paging, T0))
    run.start()
    wait_for(lambda: len(pagerduty.events) == 4, "four events in flight at once")
    held.release.set()
    run.join(timeout=60)
    assert not run.is_alive()
    keys = [e["dedup_key"] for e in pagerduty.events]
    assert len(keys) == len(set(keys)) == 10
    assert {r["status"] for r in rows(engine)} == {"sent"}


def test_a_429_among_concurrent_events_defers_and_repeats_nothing(engine, receivers, pagerduty):
    paging = {"pagerduty": receivers["pagerduty"]}
    _open(engine, range(10), PAGE)
    pagerduty.faults = [429]  # one of the first four: the receiver waits for a later run
    first = deliver_pending(engine, paging, T0)
    assert 0 < len(first.pending) < 10 and len(pagerduty.events) <= 3
    assert all(r["next_attempt_at"] is not None for r in rows(engine) if r["status"] == "pending")
    assert deliver_pending(engine, paging, T0 + dt.timedelta(hours=2)).pending == []
    keys = [e["dedup_key"] for e in pagerduty.events]
    assert len(keys) == len(set(keys)) == 10  # each once
