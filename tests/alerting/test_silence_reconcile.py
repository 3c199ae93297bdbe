"""Silences reconcile when they end (acceptance 3), against the loopback Slack, PagerDuty and SMTP
servers: a recovery suppressed by a silence is delivered once it ends (PagerDuty resolve, Slack
root updated and the recovery in its thread, email), a still-open incident is notified, and an
incident the receiver already knows about at the same level adds nothing."""

from __future__ import annotations

import datetime as dt

import pytest
import sqlalchemy as sa

from alerting import EscalationPolicy, Silence, add_silence, handle_outcome
from alerting.reconcile import RECONCILED, reconcile_mutes
from alerting.tables import notifications
from checkers import AlertLevel
from scheduling.cli import main
from scheduling.cli.exits import EXIT_OK, EXIT_USAGE
from scheduling.settings import Settings
from tests.alerting.conftest import T0, outcome
from tests.alerting.scenarios import (
    QUARTER,
    record,
    recovery_inside_an_expired_silence,
    silence_env,
    tick,
)

E, C = AlertLevel.ERROR, AlertLevel.CRITICAL


@pytest.fixture
def settings(engine, receivers, tmp_path, monkeypatch, http, smtp):
    """Settings as `dq run` builds them: dq.toml routes every level to Slack and email and ERROR
    to PagerDuty; the receivers talk to the loopback servers."""
    for name, value in silence_env(tmp_path, str(engine.url), http, smtp[0]).items():
        monkeypatch.setenv(name, value)
    return Settings.from_environment(receivers=receivers)


def statuses(engine) -> list[tuple[str, str, str]]:
    with engine.connect() as connection:
        rows = connection.execute(
            sa.select(
                notifications.c.receiver, notifications.c.reason, notifications.c.status
            ).order_by(notifications.c.id)
        ).all()
    return [tuple(r) for r in rows]  # type: ignore[misc]


def test_recovery_inside_an_expired_silence_resolves_everywhere(settings, slack, pagerduty, smtp):
    _, mailbox = smtp
    steps = recovery_inside_an_expired_silence(settings)
    next(steps)  # the incident is told
    [root] = slack.roots()
    assert [e["event_action"] for e in pagerduty.events] == ["trigger"]
    assert len(mailbox.messages) == 1

    silence_id, added, (listed, out) = next(steps)  # type: ignore[misc]
    assert added == EXIT_OK and listed == EXIT_OK
    assert f"{silence_id}  active    orders_*" in out and "upcoming  orders_*" in out

    recovered = next(steps)  # the check recovers inside the silence
    assert set(recovered.suppressed) == {"slack", "email", "pagerduty"}  # type: ignore[attr-defined]
    next(steps)  # two ticks, still silenced: nothing goes out
    assert len(pagerduty.events) == 1 and not slack.replies(root) and len(mailbox.messages) == 1
    assert root.text.startswith("[DQ] FAILED (level ERROR)")

    assert next(steps) == EXIT_OK  # expired; the next tick reconciles and delivers
    assert [e["event_action"] for e in pagerduty.events] == ["trigger", "resolve"]
    assert pagerduty.events[0]["dedup_key"] == pagerduty.events[1]["dedup_key"]
    assert root.text.startswith("[DQ] RESOLVED") and root.edits
    [reply] = slack.replies(root)
    assert "Resolved" in reply.text
    assert len(mailbox.messages) == 2 and "[DQ] RESOLVED" in mailbox.messages[1]["Subject"]
    assert mailbox.messages[1]["In-Reply-To"] == mailbox.messages[0]["Message-ID"]

    next(steps, None)  # reconciled once: the next tick sends nothing more
    assert len(pagerduty.events) == 2 and len(slack.messages) == 2 and len(mailbox.messages) == 2
    assert main(["silence", "expire", str(silence_id)]) == EXIT_USAGE  # already over


def test_open_incident_never_told_is_announced_when_the_dq_toml_silence_ends(
    settings, slack, pagerduty, smtp
):
    _, mailbox = smtp
    muted = record(settings, E, 20)  # inside the dq.toml silence: nobody hears it
    assert set(muted.suppressed) == {"slack", "email", "pagerduty"}
    tick(settings, 20)
    tick(settings, 23)
    assert not slack.messages and not pagerduty.events and not mailbox.messages

    tick(settings, 24)  # the silence ended; the check does not run again before tomorrow
    [root] = slack.roots()
    assert root.text.startswith("[DQ] FAILED (level ERROR)") and not slack.replies(root)
    assert [e["event_action"] for e in pagerduty.events] == ["trigger"]
    assert (
        len(mailbox.messages) == 1 and "[DQ] FAILED (level ERROR)" in mailbox.messages[0]["Subject"]
    )
    assert [r for _, r, s in statuses(settings.engine) if s == "pending"] == []
    assert {(r, s) for _, r, s in statuses(settings.engine)} == {
        ("new", "suppressed"),
        ("new", "sent"),
    }


@pytest.mark.parametrize(
    ("inside", "expected"),
    [(E, []), (C, ["level_raised"])],
    ids=["same-level", "raised"],
)
def test_open_incident_already_told(settings, slack, pagerduty, inside, expected):
    policy = EscalationPolicy(
        routes=settings.default_policy.routes, repeat_every=dt.timedelta(0)
    )  # repeats every run, so the run inside the silence suppresses something
    record(settings, E, 0, policy)
    tick(settings, 0)
    with settings.engine.begin() as connection:
        add_silence(connection, Silence("orders_*", T0 + QUARTER, T0 + 3 * QUARTER, "load"))
    muted = record(settings, inside, 2, policy)
    assert muted.suppressed and not muted.enqueued

    reconcile = reconcile_mutes(settings.engine, lambda _: policy, T0 + 2 * QUARTER)
    assert reconcile == []  # still silenced
    told = reconcile_mutes(settings.engine, lambda _: policy, T0 + 3 * QUARTER)
    assert sorted({n.reason.value for n in told}) == expected
    tick(settings, 3)
    [root] = slack.roots()
    assert len(slack.replies(root)) == len(expected)
    assert len(pagerduty.events) == 1 + len(expected)
    if not expected:  # nothing to say: the suppressed rows are settled, not reconsidered
        assert {s for _, r, s in statuses(settings.engine) if r == "repeat"} == {RECONCILED}
        assert reconcile_mutes(settings.engine, lambda _: policy, T0 + 4 * QUARTER) == []
    else:
        assert pagerduty.events[1]["payload"]["severity"] == "critical"
        assert "Escalated to CRITICAL" in slack.replies(root)[0].text


def test_resolved_incident_nobody_heard_of_stays_quiet(settings, slack, pagerduty, smtp):
    record(settings, E, 20)  # opens and recovers inside the dq.toml silence
    record(settings, None, 21)
    tick(settings, 24)
    tick(settings, 25)
    assert not slack.messages and not pagerduty.events and not smtp[1].messages
    assert {s for _, _, s in statuses(settings.engine)} == {RECONCILED}


def test_silence_add_refuses_what_would_mute_nothing_or_forever(settings, capsys):
    at = ["--at", T0.isoformat()]
    for bad in (
        ["--for", "0m", "--comment", "x"],
        ["--for", "2 fortnights", "--comment", "x"],
        ["--until", (T0 - QUARTER).isoformat(), "--comment", "x"],
        ["--for", "1h", "--comment", "  "],
    ):
        assert main(["silence", "add", "orders_*", *bad, *at]) == EXIT_USAGE
    assert "dq silence add:" in capsys.readouterr().err
    assert main(["silence", "add", "orders_*", "--for", "1d12h", "--comment", "x", *at]) == 0
    assert f"until {(T0 + dt.timedelta(hours=36)).isoformat()}" in capsys.readouterr().out
    assert main(["silence", "expire", "999", *at]) == EXIT_USAGE


def test_incidents_still_silenced_cost_no_transaction_each(engine):
    """1,000 silenced incidents cost 15-17 s on every tick before: each was decided again while
    its silence was still on. Now only those whose mute ended are."""
    policy = EscalationPolicy(routes={"console": AlertLevel.WARNING}, repeat_every=None)
    silence = Silence("quiet_*", T0, T0 + 4 * QUARTER, "migration")
    for i in range(40):
        handle_outcome(engine, outcome(E, check=f"quiet_{i:02d}"), policy, T0, mutes=[silence])
    statements: list[str] = []
    sa.event.listen(engine, "before_cursor_execute", lambda *a: statements.append(a[2]))
    assert reconcile_mutes(engine, lambda _: policy, T0 + QUARTER, mutes=[silence]) == []
    assert statements.count("BEGIN IMMEDIATE") == 1  # one transaction (SQLite's), not one each
    reads = [s for s in statements if not s.startswith("BEGIN")]
    assert len(reads) == 2  # the suppressed threads with their checks, the stored silences
    assert all(s.startswith("SELECT") for s in reads)
    statements.clear()
    told = reconcile_mutes(engine, lambda _: policy, T0 + 4 * QUARTER, mutes=[silence])
    assert len(told) == 40  # the silence ended: every incident decided again, and told
    assert len(statements) > 40
