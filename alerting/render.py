"""Receiver-independent wording of a notification: title, what happened, the facts, a sample
table. Receivers escape and lay it out for their medium."""

from __future__ import annotations

import urllib.parse
from collections.abc import Sequence
from dataclasses import dataclass

from alerting.model import Notification, NotifyReason
from checkers.levels import AlertLevel
from checkers.outcome import CheckOutcome, Status

SAMPLE_ROWS = 10
SAMPLE_COLUMNS = 8
CELL_WIDTH = 40


def state(outcome: CheckOutcome, level: AlertLevel) -> str:
    """ "FAILED (level ERROR)" or "could not run (level ERROR)": the words of `dq run`, so a level
    is never read as a status."""
    verb = "could not run" if outcome.status is Status.ERROR else "FAILED"
    return f"{verb} (level {level.name})"


def title(n: Notification) -> str:
    """The alert's title: `[DQ] FAILED (level ERROR): c`, `[DQ] could not run (level ERROR): c`
    or `[DQ] RESOLVED: c`."""
    words = "RESOLVED" if n.resolved else state(n.outcome, n.level)
    return f"[DQ] {words}: {n.outcome.check}"


def reason(o: CheckOutcome) -> str:
    """What failed: the reason a check could not run, else its counts."""
    return f"reason: {o.error}" if o.status is Status.ERROR else counts(o)


def headline(n: Notification) -> str:
    o = n.outcome
    if n.reason is NotifyReason.RESOLVED:
        if n.note:  # resolved by a person (marked expected)
            return f"Resolved: {n.note}."
        return f"Resolved: the check passed again after {n.failing_runs} failing run(s)."
    what = reason(o)
    if n.reason is NotifyReason.ACKNOWLEDGED:
        return f"{n.note or 'Acknowledged'}: {what}"
    if n.reason is NotifyReason.SNOOZED:
        return f"{n.note or 'Snoozed'}: {what}"
    if n.reason is NotifyReason.ALSO_FAILING:
        return n.note or f"Also failing: {what}"
    prefix = {
        NotifyReason.NEW: "",
        NotifyReason.REPEAT: f"Still failing (run {n.failing_runs}): ",
        NotifyReason.LEVEL_RAISED: f"Escalated to {n.level.name}: ",
        NotifyReason.LEVEL_LOWERED: f"Lowered to {n.level.name}: ",
    }[n.reason]
    return f"{prefix}{what}"


def counts(o: CheckOutcome) -> str:
    """Failing elements of all, with the excused ones and the share tolerance and levels judge
    when KnownBroken keys excuse some: "2,310 of 336,776 elements failing (0.69%), 1,204 of
    them excused by known-broken keys; judged on the 1,106 unexcused (0.33%)"."""
    text = f"{o.failing:,} of {o.total:,} elements failing ({o.share:.2%})"
    if not o.excused:
        return text
    return (
        f"{text}, {o.excused:,} of them excused by known-broken keys; "
        f"judged on the {o.unexcused:,} unexcused ({o.unexcused_share:.2%})"
    )


def level_text(n: Notification) -> str:
    """The notification's level, and the run's own when escalation raised it."""
    if n.resolved:
        return "RESOLVED"
    o = n.outcome
    if n.members and n.level > o.level:
        return f"{n.level.name} (the group's highest; this check {o.level.name})"
    if o.status is Status.FAILED and n.level > o.level:
        return f"{n.level.name} (escalated from {o.level.name})"
    return n.level.name


def keys_text(o: CheckOutcome, shown: int = 10) -> str:
    """The first `shown` failing keys, with how many distinct keys fail when that is known:
    "721 distinct keys (first 100 listed): N102UW, N103US, … "."""
    listed = ", ".join(map(str, o.failing_keys[:shown]))
    count = o.describe_failing_keys()
    if not count:
        more = f" and {len(o.failing_keys) - shown} more" if len(o.failing_keys) > shown else ""
        return listed + more
    more = ", …" if len(o.failing_keys) > shown or (o.failing_keys_distinct or 0) > shown else ""
    return f"{count}: {listed}{more}" if listed else count


#: Incidents named in a `still_failing` line; the rest are counted.
STILL_FAILING_NAMED = 10


def still_failing(repeats: Sequence[Notification]) -> str:
    """One line for many "still failing" repeats: "still failing: 3 incidents (a: run 17, b: run
    5, c: run 2)"."""
    named = sorted(repeats, key=lambda n: n.outcome.check)
    runs = [f"{n.outcome.check}: run {n.failing_runs}" for n in named[:STILL_FAILING_NAMED]]
    if len(named) > STILL_FAILING_NAMED:
        runs.append(f"and {len(named) - STILL_FAILING_NAMED} more")
    noun = "incident" if len(named) == 1 else "incidents"
    return f"still failing: {len(named)} {noun} ({', '.join(runs)})"


#: Group members listed by name on a root; the rest are counted.
MEMBERS_LISTED = 50


def member_lines(n: Notification) -> list[tuple[str, str, str]]:
    """The other incidents of the group's root: (level, "check: headline", link) each, and a
    last line counting those beyond MEMBERS_LISTED."""
    lines = [(m.level, f"{m.check}: {m.headline}", m.link) for m in n.members[:MEMBERS_LISTED]]
    if len(n.members) > MEMBERS_LISTED:
        lines.append(("", f"and {len(n.members) - MEMBERS_LISTED} more", ""))
    return lines


def group_text(n: Notification) -> str:
    """ " (+3 more opened in this run)" after a group root's title; empty otherwise."""
    return f" (+{len(n.members)} more opened in this run)" if n.members else ""


@dataclass(frozen=True)
class Fact:
    label: str
    value: str


def facts(n: Notification) -> list[Fact]:
    o = n.outcome
    rows = [Fact("Level", level_text(n))]
    if o.level_reason and not n.resolved:
        rows.append(Fact("Level set by", o.level_reason))
    if o.status is not Status.ERROR and not n.resolved:
        rows.append(Fact("Failing", f"{o.failing:,} / {o.total:,} ({o.share:.2%})"))
        if o.excused:
            rows.append(Fact("Excused", f"{o.excused:,} (known-broken keys)"))
            judged = f"{o.unexcused:,} / {o.total:,} ({o.unexcused_share:.2%})"
            rows.append(Fact("Not excused", f"{judged}: what tolerance and levels judge"))
    if o.tolerance:
        rows.append(Fact("Tolerance", o.tolerance))
    if o.owner:
        rows.append(Fact("Owner", o.owner))
    rows.append(Fact("Open since", n.opened_at.strftime("%Y-%m-%d %H:%M UTC")))
    if (o.failing_keys or o.failing_keys_distinct) and not n.resolved:
        rows.append(Fact("Failing keys", keys_text(o)))
    return rows


def linkable(url: str) -> bool:
    """Whether `url` may be rendered as a link (http, https, file or mailto): a `javascript:`
    or `data:` URL in a notification is shown as text."""
    return urllib.parse.urlsplit(url.strip()).scheme.lower() in {"http", "https", "file", "mailto"}


def _cell(value: object) -> str:
    text = "NULL" if value is None else str(value)
    return text if len(text) <= CELL_WIDTH else text[: CELL_WIDTH - 1] + "…"


def sample_table(n: Notification) -> tuple[list[str], list[list[str]]]:
    """Header and rows of the failing sample, bounded in rows, columns and cell width."""
    sample = [] if n.resolved else list(n.outcome.sample[:SAMPLE_ROWS])
    if not sample:
        return [], []
    columns = list(dict.fromkeys(k for row in sample for k in row))[:SAMPLE_COLUMNS]
    return columns, [[_cell(row.get(c)) for c in columns] for row in sample]


def sample_text(n: Notification) -> str:
    """The sample as a fixed-width text table."""
    columns, rows = sample_table(n)
    if not columns:
        return ""
    widths = [max(len(c), *(len(r[i]) for r in rows)) for i, c in enumerate(columns)]
    lines = [" | ".join(c.ljust(w) for c, w in zip(columns, widths, strict=True))]
    lines.append("-+-".join("-" * w for w in widths))
    lines += [" | ".join(v.ljust(w) for v, w in zip(r, widths, strict=True)) for r in rows]
    return "\n".join(lines)
