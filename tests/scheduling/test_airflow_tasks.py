"""What an outcome makes of its Airflow task (no Airflow scheduler needed: the verdicts, the task
of the check's group each outcome settles, and what `settle` raises), the tick's verdict, the
group labels, and the checks a window makes due."""

from __future__ import annotations

import datetime as dt
import logging

import pytest

from checkers.levels import AlertLevel
from checkers.outcome import CheckOutcome, Status
from checks.task_states import TaskStates, TaskVerdict
from scheduling.airflow.manifest import Entry
from scheduling.airflow.outcome_tasks import group_label, outcome_label
from scheduling.airflow.tasks import (
    CheckNotEvaluated,
    OutcomeFailed,
    due,
    due_on_assets,
    one_line,
    outcome_task,
    readiness_event,
    settle,
    shown,
    tick_done,
)
from scheduling.config import Config

UTC = dt.UTC
START, END = dt.datetime(2026, 11, 22, 6, 45, tzinfo=UTC), dt.datetime(2026, 11, 22, 7, tzinfo=UTC)
SUCCEED, FAIL, RETRY = TaskVerdict.SUCCEED, TaskVerdict.FAIL, TaskVerdict.RETRY
OUTCOMES = [
    ("passed", "OK"),
    ("tolerated", "OK"),
    ("failed", "WARNING"),
    ("failed", "ERROR"),
    ("failed", "CRITICAL"),
    ("error", "ERROR"),
]


@pytest.mark.parametrize(
    ("states", "expected"),
    [
        (TaskStates(), [SUCCEED, SUCCEED, SUCCEED, FAIL, FAIL, RETRY]),
        (TaskStates(fail_at=AlertLevel.WARNING), [SUCCEED, SUCCEED, FAIL, FAIL, FAIL, RETRY]),
        (
            TaskStates(fail_at=AlertLevel.CRITICAL),
            [SUCCEED, SUCCEED, SUCCEED, SUCCEED, FAIL, RETRY],
        ),
        (TaskStates(fail_at=None, fail_on_error=False), [SUCCEED] * 6),
    ],
)
def test_each_outcome_gives_its_task_verdict(states, expected):
    assert [states.verdict(status, level) for status, level in OUTCOMES] == expected
    assert TaskStates.from_spec(states.spec()) == states  # through the manifest unchanged


def _defaults(environ: dict[str, str]) -> TaskStates:
    return Config.from_environment(environ).task_states()


def test_deployment_defaults_come_from_the_environment():
    assert _defaults({}) == TaskStates()
    env = {"DQ_TASK_FAILS_AT": "never", "DQ_TASK_FAILS_ON_ERROR": "0"}
    assert _defaults(env) == TaskStates(fail_at=None, fail_on_error=False)
    with pytest.raises(ValueError, match="DQ_TASK_FAILS_AT must be warning, error, critical"):
        _defaults({"DQ_TASK_FAILS_AT": "loud"})
    with pytest.raises(ValueError, match="DQ_TASK_FAILS_ON_ERROR must be 1 or 0"):
        _defaults({"DQ_TASK_FAILS_ON_ERROR": "yes"})
    with pytest.raises(ValueError, match="would fail passing checks"):
        TaskStates(fail_at=AlertLevel.OK)


def _summary(status: str, level: str = "OK") -> dict[str, object]:
    return {"check": "c", "status": status, "level": level, "summary": f"c: {status}"}


def test_settle_fails_with_the_one_line_or_retries_only_a_held_window(caplog):
    entry = Entry(name="c", task_id="c", clock=None, owner="")
    caplog.set_level(logging.INFO, logger="dq.outcomes")
    with pytest.raises(OutcomeFailed) as critical:  # its retry policy: no Airflow retry
        settle(entry, _summary("failed", "CRITICAL"), attempt=1, start=START, end=END)
    assert critical.value.code == "c: failed"  # the failure message is the one line
    with pytest.raises(OutcomeFailed):  # an ERROR was evaluated twice in-process already
        settle(entry, _summary("error", "ERROR"), attempt=1, start=START, end=END)
    with pytest.raises(CheckNotEvaluated, match="already claimed"):  # Airflow retries it
        held = {"check": "c", "status": "held", "summary": "c: window already claimed by h:1"}
        settle(entry, held, attempt=1, start=START, end=END)
    warning = _summary("failed", "WARNING")
    assert settle(entry, warning, attempt=1, start=START, end=END) == warning  # to XCom
    logged = [(r.levelname, r.getMessage()) for r in caplog.records]
    assert logged == [  # by severity: filtering by ERROR finds what needs someone
        ("ERROR", "c: failed"),
        ("ERROR", "c: error"),
        ("ERROR", "c: window already claimed by h:1"),
        ("WARNING", "c: failed"),
    ]


def test_a_red_one_line_names_its_first_keys_and_the_checks_page_on_dq_serve():
    failed = CheckOutcome(
        "teams.orders:daily",
        Status.FAILED,
        AlertLevel.ERROR,
        failing=5,
        total=10,
        unexcused=5,
        failing_keys=("k1", "k2", "k3", "k4"),
    )
    serve = "https://dq.example.com/"
    assert one_line(failed, serve_url=serve) == (
        "teams.orders:daily: FAILED (level ERROR), 5/10 failing (50.00%); "
        "failing keys: k1, k2, k3, ...; https://dq.example.com/checks/teams.orders%3Adaily"
    )
    assert one_line(failed).endswith("failing keys: k1, k2, k3, ...")  # no dq serve: no link
    passed = CheckOutcome("c", Status.PASSED, total=10)
    assert one_line(passed, serve_url=serve) == passed.summary()  # nobody needs to click


def test_a_checks_own_task_states_win_over_the_deployments():
    relaxed = Entry(
        name="c",
        task_id="c",
        clock=None,
        owner="",
        task_states=TaskStates(fail_at=AlertLevel.CRITICAL, fail_on_error=False).spec(),
    )
    strict = Config.from_environment({"DQ_TASK_FAILS_AT": "warning"})
    error_failure = _summary("failed", "ERROR")
    assert settle(relaxed, error_failure, attempt=1, start=START, end=END, config=strict)
    plain = Entry(name="c", task_id="c", clock=None, owner="")
    with pytest.raises(OutcomeFailed):
        settle(plain, _summary("failed", "WARNING"), attempt=1, start=START, end=END, config=strict)


def test_due_follows_clocks_and_always_includes_broken_checks():
    entries = [
        Entry("quarterly", "quarterly", {"cron": "*/15 * * * *", "tz": "UTC"}, ""),
        Entry("nightly", "nightly", {"cron": "0 3 * * *", "tz": "UTC"}, ""),
        Entry("manual", "manual", None, ""),
        Entry("module:teams.x", "module_teams_x", None, "", problem="SyntaxError"),
    ]
    assert [e.name for e in due(entries, START, END)] == ["quarterly", "module:teams.x"]


def test_an_upstream_assets_event_runs_the_checks_declaring_it():
    by_name = {"name": "producer/flights"}
    by_uri = {"uri": "s3://lake/orders"}
    entries = [
        Entry("flights", "flights", None, "", after=(by_name,)),
        Entry("orders", "orders", None, "", after=(by_uri, by_name)),
        Entry("other", "other", None, ""),
    ]
    assert [e.name for e in due_on_assets(entries, "name:producer/flights")] == [
        "flights",
        "orders",
    ]
    assert [e.name for e in due_on_assets(entries, "uri:s3://lake/orders")] == ["orders"]


def test_each_outcome_has_its_kind():
    entry = Entry(name="c", task_id="c", clock=None, owner="")
    defaults = _defaults({})
    shown = [outcome_task(entry, _summary(status, level), defaults) for status, level in OUTCOMES]
    assert shown == ["ok", "tolerated", "warning", "failed", "critical", "not_run"]
    assert outcome_task(entry, {"check": "c", "status": "held"}, defaults) == "not_run"
    marker_lost = {**_summary("passed"), "readiness_error": "read-only file system"}
    assert outcome_task(entry, marker_lost, defaults) == "not_run"  # fails, Airflow retries
    never = _defaults({"DQ_TASK_FAILS_AT": "never", "DQ_TASK_FAILS_ON_ERROR": "0"})
    assert outcome_task(entry, _summary("failed", "CRITICAL"), never) == "warning"
    assert outcome_task(entry, _summary("error", "ERROR"), never) == "warning"


def test_every_outcome_but_passed_is_one_named_instance_of_the_outcome_task():
    entries = [Entry(name=f"c{i}", task_id=f"c{i}", clock=None, owner="") for i in range(6)]
    summaries = {
        e.name: _summary(*o) | {"check": e.name} for e, o in zip(entries, OUTCOMES, strict=True)
    }
    listed = shown(entries, summaries, _defaults({}), stale=False)
    assert listed == [  # passed (c0): no instance, no process
        {"check": "c1", "label": "≈ tolerated · c1"},
        {"check": "c2", "label": "⚠ warning · c2"},
        {"check": "c3", "label": "✖ FAILED · c3"},
        {"check": "c4", "label": "✖ CRITICAL · c4"},
        {"check": "c5", "label": "✖ could not run · c5"},
    ]
    stale = shown(entries[:1], summaries, _defaults({}), stale=True)
    assert stale == [{"check": "dq_manifest", "label": "✖ manifest out of date"}]
    assert outcome_label("critical", "module:teams.orders.daily") == (
        "✖ CRITICAL · daily (module:teams.orders)"  # the distinguishing part first
    )


def test_only_a_run_that_made_the_asset_ready_gives_its_event():
    assert readiness_event(None) is None
    assert readiness_event({**_summary("failed", "ERROR"), "ready": False}) is None
    marker = {"check": "c", "status": "passed"}
    assert readiness_event({**_summary("passed"), "ready": True, "marker": marker}) == marker


def test_the_tick_fails_only_when_checks_were_not_evaluated():
    red = {"a": _summary("failed", "CRITICAL"), "b": _summary("error", "ERROR")}
    assert tick_done(["a", "b"], red) == "2 check(s) evaluated; 2 not green: a, b"
    assert tick_done([], {}) == "0 check(s) evaluated; 0 not green: -"
    with pytest.raises(CheckNotEvaluated, match="evaluate did not finish"):
        tick_done(None, None)
    with pytest.raises(CheckNotEvaluated, match="no outcome for b"):
        tick_done(["a", "b"], {"a": red["a"]})


def test_group_labels_put_the_distinguishing_part_first():
    assert group_label("orders_not_empty") == "orders_not_empty"
    assert group_label("module:teams.orders.daily") == "daily (module:teams.orders)"
    assert group_label("module:broken") == "broken (module)"
