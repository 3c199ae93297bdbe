"""Retry-After as an HTTP date (RFC 9110 allows it) is a wait like a number of seconds, not a
receiver bug (issue 28, item 10): a Slack stand-in answering 429 with a date defers Slack until
then."""

from __future__ import annotations

import datetime as dt
import email.utils

from alerting import EscalationPolicy, deliver_pending, handle_outcome
from alerting.backoff import load_backoff
from alerting.receivers.base import retry_after_seconds
from checkers import AlertLevel
from checkers.project_db import utc_now
from tests.alerting.conftest import T0, outcome

NOON = dt.datetime(2026, 11, 24, 12, 0, tzinfo=dt.UTC)


def test_retry_after_in_seconds_or_as_an_http_date():
    assert retry_after_seconds("120", NOON) == 120.0
    assert retry_after_seconds("Tue, 24 Nov 2026 12:02:00 GMT", NOON) == 120.0
    assert retry_after_seconds("Tue, 24 Nov 2026 11:00:00 GMT", NOON) == 0.0  # already past
    assert retry_after_seconds("soon", NOON) is None  # unreadable: the backoff decides
    assert retry_after_seconds(None, NOON) is None


def test_a_429_with_a_date_defers_slack_until_that_date(engine, receivers, slack):
    handle_outcome(
        engine, outcome(AlertLevel.ERROR), EscalationPolicy(routes={"slack": AlertLevel.ERROR}), T0
    )
    until = utc_now() + dt.timedelta(minutes=10)
    slack.rate_limited = email.utils.format_datetime(until, usegmt=True)
    report = deliver_pending(engine, {"slack": receivers["slack"]}, T0)
    assert report.pending and not report.sent
    backoff = load_backoff(engine, "slack")
    assert backoff.last_error == "Slack answered 429: ratelimited"  # not a receiver bug
    assert backoff.not_before is not None
    waited = (backoff.not_before - T0).total_seconds()
    assert 9 * 60 < waited <= 10 * 60  # the date's wait, not the 30 s backoff
