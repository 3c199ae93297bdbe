"""One clock for leases (issue 28, acceptance 3): two real `dq deliver` processes whose `--at`
differ by 300 s (a backfill beside the live scheduler; clock skew looks the same) over 40
incidents. The first is held inside an email and a PagerDuty call while the second runs: the
second must not take over those rows, whose leases are times of the database's clock, not of
either deliverer's. Every notification reaches its server once."""

from __future__ import annotations

import pytest

from tests.alerting.outbox_faults import deliverers_300_s_apart

COUNT = 40


@pytest.mark.parametrize("kind", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def test_two_deliverers_300_s_apart_send_nothing_twice(
    kind, tmp_path, http, smtp, certificate, slack, pagerduty
):
    port, mailbox = smtp
    done, statuses = deliverers_300_s_apart(
        kind, tmp_path, http, port, certificate[0], mailbox, pagerduty, count=COUNT
    )
    for process in done:  # the backfill, then the live deliverer
        assert process.returncode == 0, process.stderr
    assert statuses == {"sent"}
    assert len(mailbox.messages) == len({m["Message-ID"] for m in mailbox.messages}) == COUNT
    assert len(pagerduty.events) == len({e["dedup_key"] for e in pagerduty.events}) == COUNT
    assert len(slack.messages) == len(slack.roots()) == COUNT
