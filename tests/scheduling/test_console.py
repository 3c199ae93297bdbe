"""The words `dq` prints for outcomes: status, level (and escalation), counts, time; colour only
on a terminal and never with NO_COLOR; the same words without it."""

from __future__ import annotations

import datetime as dt
import io
import os
import re
from collections.abc import Iterator

import pytest

from checkers.levels import AlertLevel
from checkers.outcome import CheckOutcome, Status
from scheduling.cli.console import Style, details, outcome_lines, status_words, tally
from scheduling.cli.run_output import run_document, run_lines
from scheduling.runner import RunReport

T0 = dt.datetime(2026, 11, 22, 6, 0, tzinfo=dt.UTC)
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def outcome(check: str, status: Status, level: AlertLevel = AlertLevel.OK, **more) -> CheckOutcome:
    took = more.pop("seconds", 1.25)
    return CheckOutcome(
        check=check,
        status=status,
        level=level,
        started_at=T0,
        finished_at=T0 + dt.timedelta(seconds=took),
        **more,
    )


OUTCOMES = [
    outcome("flights_have_times", Status.PASSED, total=960, unexcused=0),
    outcome("x", Status.FAILED, AlertLevel.ERROR, failing=2, total=16, unexcused=2, seconds=0.8),
    outcome(
        "planes_known",
        Status.FAILED,
        AlertLevel.WARNING,
        failing=40,
        total=1000,
        unexcused=30,
        seconds=125,
    ),
    outcome(
        "y",
        Status.ERROR,
        AlertLevel.ERROR,
        error="source lake/flights:\n  path does not exist",
        seconds=0.1,
    ),
    outcome(
        "z",
        Status.TOLERATED,
        failing=1,
        total=100000,
        unexcused=1,
        tolerance="fewer than 2 failing",
    ),
]


EXPECTED = """\
✔ passed                                         flights_have_times  0/960                                                   1.2s
✘ FAILED (level ERROR)                           x                   2/16 failing (12.5%)                                    0.8s
✘ FAILED (level WARNING, escalated to CRITICAL)  planes_known        40/1,000 failing (4.0%), 10 excused                     2m05s
! could not run                                  y                   source lake/flights: path does not exist  0.1s
~ tolerated                                      z                   1/100,000 failing (<0.1%), within fewer than 2 failing  1.2s
"""  # noqa: E501


def test_one_aligned_line_per_outcome_in_plain_words():
    escalated = {"planes_known": AlertLevel.CRITICAL}
    assert outcome_lines(OUTCOMES, escalated=escalated) == EXPECTED.splitlines()


def test_escalation_is_shown_only_above_the_outcome_level():
    failed = OUTCOMES[1]
    assert status_words(failed, AlertLevel.ERROR) == "FAILED (level ERROR)"
    assert status_words(failed, AlertLevel.WARNING) == "FAILED (level ERROR)"
    raised = status_words(failed, AlertLevel.CRITICAL)
    assert raised == "FAILED (level ERROR, escalated to CRITICAL)"
    broken = status_words(OUTCOMES[3], AlertLevel.CRITICAL)
    assert broken == "could not run (escalated to CRITICAL)"
    assert status_words(OUTCOMES[3]) == "could not run"
    assert details(OUTCOMES[3]) == "source lake/flights: path does not exist"  # one line


def test_failing_keys_beyond_those_listed_are_counted():
    keys = tuple(f"N{n}" for n in range(100))
    unknown = outcome(
        "planes_known",
        Status.FAILED,
        AlertLevel.WARNING,
        failing=2310,
        total=336776,
        unexcused=1106,
        failing_keys=keys,
        failing_keys_distinct=721,
    )
    assert details(unknown) == (
        "2,310/336,776 failing (0.7%), 1,204 excused, 721 distinct keys (first 100 listed)"
    )
    few = outcome(
        "x",
        Status.FAILED,
        AlertLevel.ERROR,
        failing=3,
        total=9,
        unexcused=3,
        failing_keys=("a", "b"),
        failing_keys_distinct=2,
    )
    assert details(few) == "3/9 failing (33.3%)"  # every failing key is listed: nothing to add


@pytest.fixture
def terminal() -> Iterator[io.TextIOWrapper]:
    """A real pseudo-terminal's side a program writes to."""
    master, replica = os.openpty()
    with open(replica, "w", encoding="utf-8") as tty:
        yield tty
    os.close(master)


def test_colour_on_a_terminal_only_and_never_with_no_color(terminal, tmp_path):
    assert Style.of(terminal, {"TERM": "xterm"}).colour
    assert not Style.of(terminal, {"TERM": "xterm", "NO_COLOR": "1"}).colour
    assert not Style.of(terminal, {"TERM": "dumb"}).colour
    with open(tmp_path / "out.txt", "w", encoding="utf-8") as file:
        assert Style.of(file, {"TERM": "xterm"}) == Style(colour=False, unicode=True)
    ascii_pipe = io.TextIOWrapper(io.BytesIO(), encoding="ascii")
    assert Style.of(ascii_pipe, {}) == Style(colour=False, unicode=False)

    coloured = outcome_lines(OUTCOMES, style=Style(colour=True))
    assert "\x1b[31m✘\x1b[0m \x1b[31mFAILED (level ERROR)" in coloured[1]
    assert [ANSI.sub("", line) for line in coloured] == outcome_lines(OUTCOMES)
    plain = outcome_lines(OUTCOMES, style=Style(unicode=False))
    assert [line[:2] for line in plain] == ["+ ", "x ", "x ", "! ", "~ "]


def test_the_closing_tally_and_the_json_document_carry_the_escalation():
    report = RunReport(outcomes=OUTCOMES, escalated={"planes_known": AlertLevel.CRITICAL})
    assert tally(OUTCOMES) == "1 passed, 1 tolerated, 2 FAILED, 1 could not run"
    lines = run_lines(report, code=3, took=61.0, style=Style())
    assert lines[-1] == (
        "5 checks in 1m01s: 1 passed, 1 tolerated, 2 FAILED, 1 could not run; "
        "exit 3 (a check could not run)"
    )
    document = run_document(report, at=T0, code=3)
    entries = {o["check"]: o for o in document["outcomes"]}  # type: ignore[index, union-attr]
    assert entries["planes_known"]["escalated_level"] == "CRITICAL"
    assert entries["x"]["escalated_level"] is None
    assert entries["planes_known"]["seconds"] == 125.0 and entries["y"]["rows_read"] is None
