"""A bad day's backlog against Slack's rate limit (alerting.digest): 120 incidents open at once,
CRITICAL, ERROR and WARNING; PagerDuty answers at once, the Slack stand-in takes one post a
second. Every CRITICAL pages within two ticks; Slack gets a digest of the 80 ERROR and WARNING
first notices instead of a queue of 120 posts, and no CRITICAL is folded or any notice dropped."""

from __future__ import annotations

import datetime as dt

import sqlalchemy as sa

from alerting import EscalationPolicy, deliver_pending
from alerting.delivery import RetryPolicy
from alerting.model import Notification
from alerting.tables import notifications
from checkers import AlertLevel
from scheduling.claims import hold_windows
from scheduling.settings import Settings
from scheduling.tick.record import Recording, record_all
from tests.alerting.conftest import SLACK_TOKEN, T0, outcome

LEVELS = (AlertLevel.CRITICAL, AlertLevel.ERROR, AlertLevel.WARNING)
COUNT = 120
WINDOW = (T0 - dt.timedelta(minutes=15), T0)
POLICY = EscalationPolicy(
    routes={"slack": AlertLevel.WARNING, "pagerduty": AlertLevel.CRITICAL},
    repeat_every=None,
    group_by=(),
)


def _open_incidents(engine, count: int = COUNT) -> None:
    """`count` failing outcomes recorded by the tick's record stage, one level in turn."""
    names = [f"bad_day_{i:03d}" for i in range(count)]
    held = hold_windows(engine, [(name, *WINDOW) for name in names])
    recordings = [
        Recording(
            type(name, (), {"name": name}),
            outcome(LEVELS[i % 3], check=name, sample=()),
            window=WINDOW,
        )
        for i, name in enumerate(names)
    ]
    assert record_all(Settings(engine, {}, POLICY), held, recordings, T0) == [True] * count


def _rows(engine, receiver: str) -> list[sa.Row]:
    with engine.connect() as connection:
        return list(
            connection.execute(
                sa.select(notifications.c.level, notifications.c.status, notifications.c.payload)
                .where(notifications.c.receiver == receiver)
                .order_by(notifications.c.id)
            )
        )


def test_a_backlog_over_slacks_rate_is_a_digest_and_every_critical_pages(
    engine, paced_slack, slack, pagerduty
):
    receivers = paced_slack
    _open_incidents(engine)
    retry = RetryPolicy(budget_s=20.0)  # at Slack's one post a second: 20 posts a run
    for tick in range(2):
        deliver_pending(
            engine,
            receivers,
            T0 + dt.timedelta(minutes=15 * tick),
            retry=retry,
            sleep=lambda s: None,
        )

    criticals = COUNT // 3
    paged = _rows(engine, "pagerduty")
    assert [r.status for r in paged] == ["sent"] * criticals  # every CRITICAL, within 2 ticks
    assert len(pagerduty.events) == criticals

    chat = _rows(engine, "slack")
    assert len(chat) == COUNT  # nothing dropped: every notice is a row, sent, queued or listed
    grouped = [r for r in chat if r.status == "grouped"]
    queued = [r for r in chat if r.status in ("pending", "sent")]
    # 20 a run at Slack's rate: the 40 CRITICALs stay one by one, the rest is one digest
    assert len(queued) == criticals + 1
    assert all(r.level < int(AlertLevel.CRITICAL) for r in grouped)  # never a CRITICAL
    assert sum(r.level == int(AlertLevel.CRITICAL) for r in queued) == criticals
    [digest] = [Notification.from_json(r.payload) for r in queued if '"members": [{' in r.payload]
    assert digest.level is AlertLevel.ERROR
    assert len(digest.members) == len(grouped) == COUNT - criticals - 1
    listed = {m.check for m in digest.members} | {digest.outcome.check}
    assert len(listed) == COUNT - criticals  # every ERROR and WARNING named once
    # Slack was told the most urgent first, at its rate: CRITICALs, not a 120-post queue
    posted = [m for m in slack.messages if m.thread_ts is None]
    assert posted and all("CRITICAL" in m.text for m in posted)
    assert slack.refused > 0  # the stand-in's limit was met, and deferred to, not fought


def test_a_deliverer_killed_while_folding_a_digest_folds_nothing_and_the_next_sends_each_once(
    engine, http, slack, monkeypatch
):
    """A real `deliver_pending` SIGKILLed inside the digest's transaction, after the digest's
    root was rewritten and before its members were marked (tests/scheduling/stage_crasher.py):
    nothing is half folded; the next delivery folds the same backlog and tells each incident
    once, in the digest or alone, and never folds a CRITICAL."""
    import os
    import signal
    import subprocess
    import sys
    from pathlib import Path

    from tests.scheduling import stage_crasher as crasher

    count = 12  # 4 CRITICAL, 8 ERROR and WARNING: over the 5 posts a run allows
    _open_incidents(engine, count)
    before = _rows(engine, "slack")
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[2]), "SLACK_BOT_TOKEN": "x"}
    killed = subprocess.run(
        [sys.executable, "-m", "tests.scheduling.stage_crasher", "digest", str(engine.url)],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert _rows(engine, "slack") == before  # the root's new payload rolled back with the rest
    assert {r.status for r in before} == {"pending"}

    monkeypatch.setenv("SLACK_BOT_TOKEN", SLACK_TOKEN)
    receivers = {"slack": crasher.slack_receiver(f"{http}/api/")}
    report = deliver_pending(engine, receivers, T0, retry=crasher.digest_retry())
    chat = _rows(engine, "slack")
    criticals = count // 3
    assert len(report.sent) == crasher.DIGEST_LIMIT == criticals + 1  # the CRITICALs, the digest
    assert [r.status for r in chat].count("grouped") == count - criticals - 1
    assert all(r.level < int(AlertLevel.CRITICAL) for r in chat if r.status == "grouped")
    sent = [Notification.from_json(r.payload) for r in chat if r.status == "sent"]
    told = [n.outcome.check for n in sent] + [m.check for n in sent for m in n.members]
    assert sorted(told) == [f"bad_day_{i:03d}" for i in range(count)]  # each once, none lost
    posted = [m.text for m in slack.messages if m.thread_ts is None]
    assert sorted(posted) == sorted(next(t for t in posted if n.outcome.check in t) for n in sent)
