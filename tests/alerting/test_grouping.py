"""Grouping (`group_by`): incidents opening in one run with the same key go out as one Slack
root, one mail and one PagerDuty incident at the group's highest level, listing the others; each
member's resolve is delivered in the group's thread. Outcomes fed to the alerting stages (20
checks), and one tick with real Spark; Slack, SMTP and PagerDuty stand-ins on loopback, SQLite
and PostgreSQL."""

from __future__ import annotations

import datetime as dt

import pytest

from alerting import EscalationPolicy, deliver_pending, handle_outcome, outbox
from alerting.grouping import group_key
from checkers import AlertLevel, FixedLevel, PredicateSingleDatasetChecker
from checkers.parsers import CallableParser
from checks import QualityCheck
from scheduling.runner import run_checks
from scheduling.schema import project_database
from scheduling.settings import Settings
from tests.alerting.conftest import T0, outcome
from tests.scheduling.databases import fresh_database

W, E, C = AlertLevel.WARNING, AlertLevel.ERROR, AlertLevel.CRITICAL
HOUR = dt.timedelta(hours=1)
KINDS = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
POLICY = EscalationPolicy(
    routes={"slack": W, "email": W, "pagerduty": E}, repeat_every=None, group_by=("owner",)
)
NAMES = [f"billing_check_{i:02}" for i in range(20)]


@pytest.fixture(params=KINDS)
def engine(request, tmp_path):
    with fresh_database(request.param, tmp_path) as url:
        engine = project_database(url)
        yield engine
        engine.dispose()


def test_the_group_key_takes_the_policy_fields_and_skips_an_outcome_without_them():
    failing = outcome(E, tags=("payments", "daily"))
    assert group_key(("owner",), failing, None) == "owner=billing"
    assert group_key(("tag", "source"), failing, "path:/x") == "tag=daily,payments|source=path:/x"
    assert group_key(("source",), failing, None) is None
    assert group_key((), failing, "path:/x") is None
    with pytest.raises(ValueError, match="group_by takes a list of owner, tag, source"):
        EscalationPolicy(group_by=("team",))


def test_twenty_checks_of_one_owner_are_one_root_one_mail_one_page_and_every_resolve_arrives(
    engine, receivers, slack, pagerduty, smtp
):
    mailbox = smtp[1]
    for n, name in enumerate(NAMES):
        level = C if n == 7 else E  # the group pages at its highest level
        handle_outcome(engine, outcome(level, check=name), POLICY, T0)
    report = deliver_pending(engine, receivers, T0)
    assert report.pending == [] and report.failed == []

    [root] = slack.roots()
    assert "billing_check_00" in root.text and "(+19 more opened in this run)" in root.text
    listed = str(root.blocks)
    assert all(name in listed for name in NAMES[1:]) and "CRITICAL" in listed
    [mail] = mailbox.messages
    assert "+19 more" in mail["Subject"]
    plain = mail.get_payload()[0].get_payload(decode=True).decode()
    assert all(name in plain for name in NAMES[1:]) and "billing_check_00" in mail["Subject"]
    assert "Level: CRITICAL (the group's highest; this check ERROR)" in plain
    [page] = pagerduty.events
    assert page["event_action"] == "trigger" and page["payload"]["severity"] == "critical"
    assert len(page["payload"]["custom_details"]["group"]) == 19

    for name in NAMES:  # all pass again: each member's resolve, in the group's thread
        handle_outcome(engine, outcome(None, check=name), POLICY, T0 + HOUR)
    report = deliver_pending(engine, receivers, T0 + HOUR)
    assert report.pending == [] and report.failed == []
    assert slack.roots() == [root]
    replies = [r.text for r in slack.replies(root)]
    assert len(replies) == 20 and all("Resolved" in r for r in replies)
    assert sorted(name for name in NAMES for r in replies[1:] if r.startswith(name)) == NAMES[1:]
    assert len(mailbox.messages) == 21
    first = mail["Message-ID"]
    assert all(m["In-Reply-To"] == first for m in mailbox.messages[1:])
    resolves = [e for e in pagerduty.events if e["event_action"] == "resolve"]
    assert page["dedup_key"] in {e["dedup_key"] for e in resolves}
    assert [e["event_action"] for e in pagerduty.events].count("trigger") == 1


def test_the_groups_page_resolves_only_when_every_member_resolved(engine, receivers, pagerduty):
    names = NAMES[:3]
    for name in names:
        handle_outcome(engine, outcome(E, check=name), POLICY, T0)
    chosen = {"pagerduty": receivers["pagerduty"]}
    assert deliver_pending(engine, chosen, T0).pending == []
    [page] = pagerduty.events
    for hours, name in enumerate([names[0], names[2], names[1]], start=1):
        handle_outcome(engine, outcome(None, check=name), POLICY, T0 + hours * HOUR)
        assert deliver_pending(engine, chosen, T0 + hours * HOUR).pending == []
        if name != names[1]:  # the first incident, then one member: others of the group fail
            assert pagerduty.events == [page]
    *_, resolve = pagerduty.events
    assert (resolve["event_action"], resolve["dedup_key"]) == ("resolve", page["dedup_key"])
    assert len(pagerduty.events) == 2


def test_a_member_recorded_after_a_deliverer_took_the_root_replies_in_the_thread(
    engine, receivers, slack
):
    policy = EscalationPolicy(routes={"slack": W}, repeat_every=None, group_by=("owner",))
    handle_outcome(engine, outcome(E, check="billing_first"), policy, T0)
    taken = outbox.claim_many(engine, "slack", holder="other", now=T0, lease=HOUR)
    assert taken  # another deliverer holds the root: too late to list a member on it
    handle_outcome(engine, outcome(E, check="billing_late"), policy, T0)
    later = T0 + 2 * HOUR  # the other deliverer died; its lease ran out
    assert deliver_pending(engine, {"slack": receivers["slack"]}, later).pending == []
    [root] = slack.roots()
    assert "billing_first" in root.text and "more opened" not in root.text
    [reply] = slack.replies(root)
    assert reply.text.startswith("billing_late: ")


# one tick: real Spark, checks of one owner failing together


def _owned(name: str) -> type[QualityCheck]:
    def checker(self, data):
        return PredicateSingleDatasetChecker(data, "amount > 0", key="id")

    body = {
        "name": name,
        "owner": "payments",
        "parser": CallableParser(
            lambda spark: spark.createDataFrame([(1, -1), (2, 5)], "id int, amount int"),
            name="payments",
        ),
        "alert_level": FixedLevel(E),
        "checker": checker,
    }
    return type(name.title().replace("_", ""), (QualityCheck,), body, register=False)


TICK_CHECKS = [_owned(f"grouped_payments_{i}") for i in range(3)]


def test_a_tick_groups_the_checks_of_one_owner_failing_together(
    engine, receivers, slack, pagerduty, spark, tmp_path
):
    chosen = {name: receivers[name] for name in ("slack", "pagerduty")}
    settings = Settings(engine, chosen, POLICY, state_dir=tmp_path / "state")
    report = run_checks(TICK_CHECKS, now=T0, settings=settings, spark=spark)
    assert len(report.outcomes) == 3
    [root] = slack.roots()
    assert "(+2 more opened in this run)" in root.text
    assert [e["event_action"] for e in pagerduty.events] == ["trigger"]
