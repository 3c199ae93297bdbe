"""How `dq` shows outcomes to people: one line per check (status, level, counts, time) in words
that read the same without colour, and the lines that close a run. Colour only on a terminal,
never with NO_COLOR set."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TextIO

from checkers.levels import AlertLevel
from checkers.outcome import CheckOutcome, Status

#: Mark (Unicode, ASCII) and ANSI colour of each status.
MARKS = {
    Status.PASSED: ("✔", "+", "32"),
    Status.TOLERATED: ("~", "~", "33"),
    Status.FAILED: ("✘", "x", "31"),
    Status.ERROR: ("!", "!", "35"),
}
STATUS_WORDS = {
    Status.PASSED: "passed",
    Status.TOLERATED: "tolerated",
    Status.FAILED: "FAILED",
    Status.ERROR: "could not run",
}


@dataclass(frozen=True)
class Style:
    """Whether lines get ANSI colour and Unicode marks."""

    colour: bool = False
    unicode: bool = True

    @classmethod
    def of(cls, stream: TextIO, environ: Mapping[str, str] | None = None) -> Style:
        env = os.environ if environ is None else environ
        tty = bool(getattr(stream, "isatty", lambda: False)())
        colour = tty and not env.get("NO_COLOR") and env.get("TERM") != "dumb"
        try:
            "✔✘".encode(getattr(stream, "encoding", None) or "ascii")
            unicode = True
        except (UnicodeEncodeError, LookupError):
            unicode = False
        return cls(colour=colour, unicode=unicode)

    def mark(self, status: Status) -> str:
        fancy, plain, code = MARKS[status]
        return self.paint(fancy if self.unicode else plain, code)

    def paint(self, text: str, code: str) -> str:
        return f"\x1b[{code}m{text}\x1b[0m" if self.colour and text else text


def status_words(outcome: CheckOutcome, escalated: AlertLevel | None = None) -> str:
    """ "passed", "tolerated", "FAILED (level ERROR)", "FAILED (level WARNING, escalated to
    CRITICAL)", "could not run" (its open incident's level shown only when escalated)."""
    words = STATUS_WORDS[outcome.status]
    raised = escalated is not None and escalated > outcome.level
    if outcome.status is Status.FAILED:
        more = f", escalated to {escalated.name}" if raised and escalated else ""
        return f"{words} (level {outcome.level.name}{more})"
    if outcome.status is Status.ERROR and raised and escalated:
        return f"{words} (escalated to {escalated.name})"
    return words


def percent(share: float) -> str:
    if share == 0:
        return "0%"
    return "<0.1%" if share < 0.001 else f"{share:.1%}"


def details(outcome: CheckOutcome) -> str:
    """Counts ("2/16 failing (12.5%)"), or why the check could not run, on one line."""
    if outcome.status is Status.ERROR:
        return " ".join((outcome.error or "no reason given").split())
    counts = f"{outcome.failing:,}/{outcome.total:,}"
    if outcome.status is Status.PASSED:
        return counts
    text = f"{counts} failing ({percent(outcome.share)})"
    if outcome.unexcused < outcome.failing:
        text += f", {outcome.failing - outcome.unexcused:,} excused"
    if outcome.status is Status.FAILED and (outcome.failing_keys_distinct or 0) > len(
        outcome.failing_keys
    ):  # more keys fail than the outcome lists: say how many
        text += f", {outcome.describe_failing_keys()}"
    if outcome.status is Status.TOLERATED and outcome.tolerance:
        text += f", within {outcome.tolerance}"
    return text


def seconds(outcome: CheckOutcome) -> float | None:
    if outcome.started_at is None or outcome.finished_at is None:
        return None
    return max(0.0, (outcome.finished_at - outcome.started_at).total_seconds())


def duration(value: float | None) -> str:
    if value is None:
        return ""
    if value < 60:
        return f"{value:.1f}s"
    minutes, rest = divmod(round(value), 60)
    return f"{minutes}m{rest:02d}s"


def outcome_lines(
    outcomes: Sequence[CheckOutcome],
    *,
    escalated: Mapping[str, AlertLevel] | None = None,
    style: Style = Style(),
) -> list[str]:
    """One aligned line per outcome: mark, status words, check, details, time."""
    raised = escalated or {}
    rows = [
        (o, status_words(o, raised.get(o.check)), details(o), duration(seconds(o)))
        for o in outcomes
    ]
    status_width = max((len(words) for _, words, _, _ in rows), default=0)
    name_width = max((len(o.check) for o in outcomes), default=0)
    counts_width = max(
        (len(text) for o, _, text, _ in rows if o.status is not Status.ERROR), default=0
    )
    lines = []
    for outcome, words, text, took in rows:
        padded = text if outcome.status is Status.ERROR else text.ljust(counts_width)
        status = style.paint(words.ljust(status_width), MARKS[outcome.status][2])
        line = f"{style.mark(outcome.status)} {status}  {outcome.check.ljust(name_width)}  "
        lines.append(f"{line}{padded}  {took}".rstrip())
    return lines


def tally(outcomes: Sequence[CheckOutcome]) -> str:
    """ "4 passed, 1 tolerated, 4 FAILED, 1 could not run" (statuses that occurred)."""
    counts = {status: sum(o.status is status for o in outcomes) for status in STATUS_WORDS}
    parts = [f"{n} {STATUS_WORDS[status]}" for status, n in counts.items() if n]
    return ", ".join(parts) or "nothing ran"
