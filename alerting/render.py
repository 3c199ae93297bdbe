"""Receiver-independent wording of a notification: title, what happened, the facts, a sample
table. Receivers escape and lay it out for their medium."""

from __future__ import annotations

import urllib.parse
from dataclasses import dataclass

from alerting.model import Notification, NotifyReason
from checkers.outcome import Status

SAMPLE_ROWS = 10
SAMPLE_COLUMNS = 8
CELL_WIDTH = 40


def title(n: Notification) -> str:
    state = "RESOLVED" if n.resolved else n.level.name
    return f"[DQ] {state}: {n.outcome.check}"


def headline(n: Notification) -> str:
    o = n.outcome
    if n.reason is NotifyReason.RESOLVED:
        return f"Resolved: the check passed again after {n.failing_runs} failing run(s)."
    what = (
        f"could not be evaluated: {o.error}"
        if o.status is Status.ERROR
        else f"{o.failing:,} of {o.total:,} elements failing ({o.share:.2%})"
    )
    prefix = {
        NotifyReason.NEW: "",
        NotifyReason.REPEAT: f"Still failing (run {n.failing_runs}): ",
        NotifyReason.LEVEL_RAISED: f"Escalated to {n.level.name}: ",
        NotifyReason.LEVEL_LOWERED: f"Lowered to {n.level.name}: ",
    }[n.reason]
    return f"{prefix}{what}"


@dataclass(frozen=True)
class Fact:
    label: str
    value: str


def facts(n: Notification) -> list[Fact]:
    o = n.outcome
    rows = [Fact("Level", "RESOLVED" if n.resolved else n.level.name)]
    if o.status is not Status.ERROR and not n.resolved:
        rows.append(Fact("Failing", f"{o.failing:,} / {o.total:,} ({o.share:.2%})"))
        if o.unexcused != o.failing:
            rows.append(Fact("Not excused", f"{o.unexcused:,}"))
    if o.tolerance:
        rows.append(Fact("Tolerance", o.tolerance))
    if o.owner:
        rows.append(Fact("Owner", o.owner))
    rows.append(Fact("Open since", n.opened_at.strftime("%Y-%m-%d %H:%M UTC")))
    if o.failing_keys and not n.resolved:
        shown = ", ".join(map(str, o.failing_keys[:10]))
        more = f" and {len(o.failing_keys) - 10} more" if len(o.failing_keys) > 10 else ""
        rows.append(Fact("Failing keys", shown + more))
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
