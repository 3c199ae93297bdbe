"""Acceptance: two `dq run --due` processes started at the same moment (a cron tick and a manual
run, a second apart) on one due, failing check, with Slack, PagerDuty and SMTP answering slowly,
on SQLite and on PostgreSQL: one evaluation, one incident, exactly one message per receiver; the
other run says it skipped the window."""

from __future__ import annotations

import re

import pytest

from tests.scheduling.overlapping import overlapping_due_runs

# Concurrent `dq run` processes, each with its own Spark. `make test-fast` skips it.
pytestmark = pytest.mark.slow


@pytest.mark.parametrize("kind", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def test_two_concurrent_due_runs_evaluate_record_and_alert_once(kind, tmp_path):
    runs = overlapping_due_runs(kind, tmp_path)
    codes, outputs = runs.codes, runs.outputs
    assert sorted(codes) == [0, 1], outputs  # the evaluating run failed the check, the other: 0
    winner, loser = (outputs[0], outputs[1]) if codes[0] == 1 else (outputs[1], outputs[0])
    assert re.search(r"FAILED \(level CRITICAL\) +overlap_orders +1/3 failing", winner), winner
    assert "FAILED" not in loser
    assert "overlap_orders: skipped, window (2026-11-22T06:45:00+00:00, " in loser
    # claims done: the check's window, and the day's prune (one runner prunes per day)
    assert runs.recorded == {"runs": 1, "incidents": 1, "claims done": 2, "sent": 3, "other": 0}
    assert len(runs.slack.messages) == 1 and len(runs.slack.roots()) == 1
    assert [e["event_action"] for e in runs.pagerduty.events] == ["trigger"]
    assert len(runs.mailbox.messages) == 1
