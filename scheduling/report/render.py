"""The HTML report: one self-contained page (inline CSS, SVG and a small script; no network) with
the latest outcome per check, filters by owner, tag and status, and a section per check with its
failing sample, plots over time, incident timeline and outcome history. Every data value is
escaped; the script reads data only from a JSON block."""

from __future__ import annotations

import datetime as dt
import html
import re
from collections import Counter
from pathlib import Path

from sqlalchemy.engine import Engine

from checkers.levels import AlertLevel
from scheduling.report.assets import CSS, JS, json_block
from scheduling.report.data import CheckHistory, load_histories
from scheduling.report.plot import MAX_POINTS, series_of, svg_plot
from scheduling.report.sections import (
    COMPACT_FROM,
    COMPACT_PLOTS,
    COMPACT_POINTS,
    STATUS_WORDS,
    CellTexts,
    by_severity,
    check_section,
    escalated,
    latest_table,
)

e = html.escape
#: The report of 500 checks, each with a long history, stays under this size (docs/operations.md):
#: plots are downsampled, histories and samples cut (tests/scheduling/test_report_scale.py).
REPORT_BYTES_500 = 5 * 1024 * 1024
__all__ = [
    "REPORT_BYTES_500",
    "page",
    "render_histories",
    "render_report",
    "report_body",
    "write_report",
]


def _anchors(checks: list[CheckHistory]) -> dict[str, tuple[str, str]]:
    """Check name -> (its section's id, readable and unique; its key in the page's data)."""
    anchors: dict[str, tuple[str, str]] = {}
    taken: set[str] = set()
    for index, check in enumerate(checks):
        slug = "check-" + re.sub(r"[^A-Za-z0-9_-]+", "-", check.name)[:60].strip("-")
        while slug in taken:
            slug += f"-{index}"
        taken.add(slug)
        anchors[check.name] = (slug, f"k{index}")
    return anchors


def _options(name: str, label: str, values: dict[str, str]) -> str:
    options = "".join(
        f'<option value="{e(value)}">{e(text)}</option>' for value, text in values.items()
    )
    return (
        f'<label>{label}<select name="{name}"><option value="">all</option>{options}</select>'
        "</label>"
    )


def _filters(checks: list[CheckHistory]) -> str:
    outcomes = [check.latest.outcome for check in checks]
    owners = sorted({o.owner for o in outcomes if o.owner})
    tags = sorted({tag for o in outcomes for tag in o.tags})
    present = {o.status.value for o in outcomes}
    statuses = {value: words for value, words in STATUS_WORDS.items() if value in present}
    return (
        '<div id="filters" role="search" hidden>'
        + _options("owner", "Owner", {owner: owner for owner in owners})
        + _options("tag", "Tag", {tag: tag for tag in tags})
        + _options("status", "Status", statuses)
        + '<button type="button" id="reset">Show all</button>'
        + '<span id="shown" class="muted" aria-live="polite"></span></div>'
    )


def _cards(checks: list[CheckHistory]) -> str:
    statuses = Counter(check.latest.outcome.status.value for check in checks)
    open_incidents = sum(check.open_incident is not None for check in checks)
    cards = [(STATUS_WORDS[value], statuses[value], value) for value in STATUS_WORDS]
    failed = [c for c in checks if c.latest.outcome.status.value == "failed"]
    levels = Counter(max(c.latest.outcome.level, escalated(c) or AlertLevel.OK) for c in failed)
    cards[2:3] = [
        (f"FAILED at {level.name}", n, "failed")
        for level, n in sorted(levels.items(), reverse=True)
    ] or cards[2:3]
    cards.append(("open incidents", open_incidents, "failed" if open_incidents else "passed"))
    return (
        '<div class="cards">'
        + "".join(
            f'<div class="card"><b class="{css if count else ""}">{count}</b>{e(words)}</div>'
            for words, count, css in cards
        )
        + "</div>"
    )


LEGEND = (
    '<p class="legend muted"><span><i style="background:#2f6fdf"></i>a run</span>'
    '<span><i style="background:#c0231a"></i>FAILED or could not run</span>'
    '<span><i style="background:#e36c09"></i>more than 3 standard deviations from the earlier '
    "runs</span><span>Times in UTC; hover a time for yours, a plot for values.</span></p>"
)


def report_body(checks: list[CheckHistory], *, base: Path | None) -> tuple[str, dict[str, object]]:
    """The report's content (latest outcomes, filters, a section per check) and the data its
    script reads; the live pages (scheduling/serve) show it too."""
    checks = by_severity(checks)
    anchors = _anchors(checks)
    compact = len(checks) > COMPACT_FROM
    plots: dict[str, list[list[object]]] = {}
    texts = CellTexts()
    sections = []
    for check in checks:
        anchor, key = anchors[check.name]
        charts: list[str] = []
        series = series_of([(run.at, run.outcome) for run in check.runs])
        for name, points in list(series.items())[: COMPACT_PLOTS if compact else None]:
            if len(points) > 1:
                plot_id = f"{key}p{len(charts)}"
                most = COMPACT_POINTS if compact else MAX_POINTS
                chart, plots[plot_id] = svg_plot(
                    plot_id, name, points, most=most, titles=not compact
                )
                charts.append(chart)
        section = check_section(
            check, anchor, key, "".join(charts), base=base, texts=texts, compact=compact
        )
        sections.append(section)
    data = {
        "checks": {
            anchors[check.name][1]: {
                "name": check.name,
                "owner": check.latest.outcome.owner,
                "tags": list(check.latest.outcome.tags),
                "status": check.latest.outcome.status.value,
            }
            for check in checks
        },
        "plots": plots,
        "cells": texts.values,
    }
    body = (
        _cards(checks)
        + _filters(checks)
        + "<h2>Latest outcome per check</h2>"
        + (latest_table(checks, anchors) if checks else "<p>No runs recorded yet.</p>")
        + "<h2>Checks</h2>"
        + LEGEND
        + "".join(sections)
    )
    return body, data


def page(title: str, body: str, data: dict[str, object]) -> str:
    """A whole page: inline style, `body`, the hover tip, `data` as JSON and the script."""
    return (
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width,initial-scale=1'>"
        f"<title>{e(title)}</title><style>{CSS}</style></head><body><main>"
        + body
        + '</main><div id="tip" role="tooltip" hidden></div>'
        f'<script type="application/json" id="report-data">{json_block(data)}</script>'
        f"<script>{JS}</script></body></html>"
    )


def render_report(
    engine: Engine,
    *,
    now: dt.datetime,
    title: str = "dq-checkers report",
    base: Path | None = None,
) -> str:
    """The page. `base` is the directory the page will be written to: links to local files are
    made relative to it."""
    return render_histories(load_histories(engine, now=now), now=now, title=title, base=base)


def render_histories(
    checks: list[CheckHistory], *, now: dt.datetime, title: str, base: Path | None = None
) -> str:
    """The page of these checks' histories."""
    body, data = report_body(checks, base=base)
    runs = sum(len(check.runs) for check in checks)
    return page(
        title,
        f"<h1>{e(title)}</h1><p class='muted'>Generated {now:%Y-%m-%d %H:%M} UTC from "
        f"{runs:,} runs of {len(checks)} checks.</p>" + body,
        data,
    )


def write_report(engine: Engine, path: str | Path, *, now: dt.datetime) -> Path:
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    page = render_report(engine, now=now, base=target.parent.resolve())
    target.write_text(page, encoding="utf-8")
    return target
