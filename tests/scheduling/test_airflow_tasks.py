"""What an outcome makes of its Airflow task (no Airflow scheduler needed: the verdicts, and the
exceptions `settle` raises, are Airflow's own classes), and the checks a window makes due."""

from __future__ import annotations

import datetime as dt

import pytest
from airflow.sdk.exceptions import AirflowFailException

from checkers.levels import AlertLevel
from checks.task_states import TaskStates, TaskVerdict
from scheduling.airflow.manifest import Entry
from scheduling.airflow.tasks import CheckNotEvaluated, due, due_on_assets, green, settle
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


def test_settle_fails_without_retry_with_retry_or_succeeds(capsys):
    entry = Entry(name="c", task_id="c", clock=None, owner="")
    with pytest.raises(AirflowFailException, match="c: failed"):  # Airflow never retries it
        settle(entry, _summary("failed", "CRITICAL"), attempt=1, start=START, end=END)
    with pytest.raises(CheckNotEvaluated, match="c: error"):  # any other exception: retried
        settle(entry, _summary("error", "ERROR"), attempt=1, start=START, end=END)
    with pytest.raises(CheckNotEvaluated, match="already claimed"):
        held = {"check": "c", "status": "held", "summary": "c: window already claimed by h:1"}
        settle(entry, held, attempt=1, start=START, end=END)
    warning = _summary("failed", "WARNING")
    assert settle(entry, warning, attempt=1, start=START, end=END) == warning  # to XCom
    assert "c: failed" in capsys.readouterr().out  # and to the task log


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
    with pytest.raises(AirflowFailException):
        settle(
            plain, _summary("failed", "WARNING"), attempt=1, start=START, end=END, config=strict
        )


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


def test_only_a_task_that_must_fail_needs_a_process():
    entry = Entry(name="c", task_id="c", clock=None, owner="")
    defaults = _defaults({})
    assert green(entry, _summary("passed"), defaults)
    assert green(entry, _summary("failed", "WARNING"), defaults)
    assert not green(entry, _summary("failed", "ERROR"), defaults)
    assert not green(entry, _summary("error", "ERROR"), defaults)
    assert not green(entry, {"check": "c", "status": "held", "summary": "held"}, defaults)
    marker_lost = {**_summary("passed"), "readiness_error": "read-only file system"}
    assert not green(entry, marker_lost, defaults)  # the result task fails and retries
    assert green(entry, _summary("failed", "CRITICAL"), _defaults({"DQ_TASK_FAILS_AT": "never"}))
