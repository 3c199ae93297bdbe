"""One clock for leases (issue 28, acceptance 3): two real `dq deliver` processes whose `--at`
differ by 300 s (a backfill beside the live scheduler; clock skew looks the same) over 40
incidents. The first is held inside an email and a PagerDuty call while the second runs: the
second must not take over those rows, whose leases are times of the database's clock, not of
either deliverer's. Every notification reaches its server once."""

from __future__ import annotations

import datetime as dt

import pytest

from scheduling.schema import project_database
from tests.alerting.conftest import T0
from tests.alerting.deliverers import database, deliverer_env, start_deliver
from tests.alerting.scenarios import incidents, rows
from tests.alerting.servers import loopback_receivers_toml
from tests.polling import wait_until_set

COUNT = 40


@pytest.mark.parametrize("kind", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def test_two_deliverers_300_s_apart_send_nothing_twice(
    kind, tmp_path, http, smtp, certificate, slack, pagerduty
):
    port, mailbox = smtp
    with database(kind, tmp_path) as url:
        engine = project_database(url)
        try:
            incidents(engine, COUNT)  # each to Slack, email and PagerDuty
            env = deliverer_env(tmp_path, url, http, port, certificate[0])
            # the held calls must outlast the backfill without timing out (a timed-out email is
            # in doubt and sent again by design: not what this test is about)
            (tmp_path / "dq.toml").write_text(loopback_receivers_toml(http, port, timeout_s=110))
            held = [mailbox.gates.add("DATA"), pagerduty.gates.add("enqueue:after")]
            live = start_deliver(env, T0)
            for gate in held:
                wait_until_set(gate.reached, "the live deliverer held")
            backfill = start_deliver(env, T0 + dt.timedelta(seconds=300))
            _, err = backfill.communicate(timeout=120)
            assert backfill.returncode == 0, err
            for gate in held:
                gate.release.set()
            _, live_err = live.communicate(timeout=120)
            assert live.returncode == 0, live_err
            statuses = {r["status"] for r in rows(engine)}
        finally:
            engine.dispose()
    assert statuses == {"sent"}
    assert len(mailbox.messages) == len({m["Message-ID"] for m in mailbox.messages}) == COUNT
    assert len(pagerduty.events) == len({e["dedup_key"] for e in pagerduty.events}) == COUNT
    assert len(slack.messages) == len(slack.roots()) == COUNT
