"""The report's HTML pieces: a check's status in the one vocabulary ("FAILED", "level ERROR";
"could not run" with its reason), the latest-outcome table and the section per check (why it
matters, failing sample, plots, incident timeline, outcome history). Every data value is escaped;
links from the data become hrefs only for http(s) and local files."""

from __future__ import annotations

import datetime as dt
import html
import json
import os
from pathlib import Path
from urllib.parse import quote, unquote, urlparse
from urllib.request import url2pathname

from checkers.levels import AlertLevel
from checkers.outcome import CheckOutcome, Status
from scheduling.report.data import CheckHistory, IncidentStory

HISTORY_ROWS = 30
#: With more checks than this, each shows less (COMPACT_HISTORY_ROWS, COMPACT_PLOTS of
#: COMPACT_POINTS points), so the report of 500 checks stays a few MB (REPORT_BYTES_500).
COMPACT_FROM = 50
COMPACT_HISTORY_ROWS = 8
COMPACT_PLOTS = 1
COMPACT_POINTS = 30
COMPACT_SAMPLE_ROWS = 3
COMPACT_SAMPLE_COLUMNS = 12
COMPACT_STRIP_RUNS = 12
#: A sample cell shows this much of its value (its title holds the stored, bounded value).
CELL_SHOWN = 60
SAMPLE_ROWS = 10
STRIP_RUNS = 24
KEYS_SHOWN = 20
e = html.escape

#: Filter value -> how the page names that status.
STATUS_WORDS = {
    Status.PASSED.value: "passed",
    Status.TOLERATED.value: "tolerated",
    Status.FAILED.value: "FAILED",
    Status.ERROR.value: "could not run",
}


def status_words(outcome: CheckOutcome, escalated: AlertLevel | None = None) -> tuple[str, str]:
    """The status and its detail: ("FAILED", "level ERROR"), ("could not run", reason), ..."""
    word = STATUS_WORDS[outcome.status.value]
    if outcome.status is Status.FAILED:
        detail = f"level {level_detail(outcome)}"
        if escalated is not None and escalated > outcome.level:
            detail += f", escalated to {escalated.name}"
        return word, detail
    if outcome.status is Status.ERROR:
        return word, outcome.error or "no reason recorded"
    if outcome.status is Status.TOLERATED and outcome.tolerance:
        return word, f"within {outcome.tolerance}"
    return word, ""


def level_detail(outcome: CheckOutcome) -> str:
    """The level and which threshold set it: "ERROR: 12 failing > warning threshold 10, <= error
    threshold 100" (the level's name alone for outcomes recorded before this was recorded)."""
    return outcome.level_reason or outcome.level.name


def escalated(check: CheckHistory) -> AlertLevel | None:
    incident = check.open_incident
    return incident.effective_level if incident is not None else None


def when(at: dt.datetime | None) -> str:
    return f"{at:%Y-%m-%d %H:%M}" if at is not None else ""


def stamp(at: dt.datetime | None) -> str:
    """A time as HTML: in UTC, saying so; the page's script adds the viewer's zone on hover."""
    if at is None:
        return ""
    utc = at.astimezone(dt.UTC)
    return f'<time datetime="{utc:%Y-%m-%dT%H:%M:%SZ}">{utc:%Y-%m-%d %H:%M} UTC</time>'


#: Longer texts (an error's reason) show their start; the rest unfolds on a click.
FOLD_CHARS = 160


def _cut(text: str) -> str:
    return text if len(text) <= FOLD_CHARS else text[: FOLD_CHARS - 40] + "…"


def folded(text: str) -> str:
    """`text` escaped, folded into a <details> when longer than FOLD_CHARS."""
    if len(text) <= FOLD_CHARS:
        return e(text)
    return f"<details><summary>{e(_cut(text))}</summary>{e(text)}</details>"


_STATUS_RANK = {Status.FAILED: 0, Status.ERROR: 1, Status.TOLERATED: 2, Status.PASSED: 3}


def by_severity(checks: list[CheckHistory]) -> list[CheckHistory]:
    """The worst first: the highest (escalated) level, FAILED before could not run before
    tolerated before passed, then the most recent run first."""

    def rank(check: CheckHistory) -> tuple[int, int, float]:
        outcome = check.latest.outcome
        ok = outcome.status in (Status.PASSED, Status.TOLERATED)
        level = 0 if ok else max(outcome.level, escalated(check) or AlertLevel.OK)
        return (-int(level), _STATUS_RANK[outcome.status], -check.latest.at.timestamp())

    return sorted(checks, key=rank)


def reading(outcome: CheckOutcome) -> str:
    """Rows the run read, and for incremental checks how many of the partitions were read;
    metrics answered from metadata say so, with the bytes they spared reading."""
    read = outcome.reading
    text = f"{read['rows_read']:,}" if "rows_read" in read else ""
    if "partitions" in read:
        text += f" ({read.get('partitions_read', 0):,} of {read['partitions']:,} partitions)"
    return " ".join(p for p in (text, metadata_note(outcome)) if p)


def metadata_note(outcome: CheckOutcome) -> str:
    """How many metrics came from metadata (file statistics, the schema), and what it spared."""
    answered = sum(1 for s in outcome.metric_sources.values() if s == "metadata")
    if not answered:
        return ""
    spared = outcome.reading.get("bytes_not_read", 0)
    of = f"{answered} of {len(outcome.metric_sources)} metrics from metadata"
    return f"[{of}, {spared:,} bytes not read]" if spared else f"[{of}]"


def counts(outcome: CheckOutcome) -> str:
    return "" if outcome.status is Status.ERROR else f"{outcome.failing:,} / {outcome.total:,}"


def href(url: str, base: Path | None) -> str | None:
    """Where a link from the data may point: http(s) as is, a local file relative to the report's
    directory (so the report and the rows can move together); anything else is not a link."""
    parsed = urlparse(url)
    if parsed.scheme in ("http", "https"):
        return url
    if parsed.scheme != "file":
        return None
    path = url2pathname(unquote(parsed.path))
    if base is None:
        return url
    try:
        return quote(Path(os.path.relpath(path, base)).as_posix())
    except ValueError:  # another drive
        return url


def _text(value: object) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


class CellTexts:
    """Sample values too long for their cell, each kept once in the page's data (`cells`): the
    same value in many samples (one row failing several checks, a wide default) costs its bytes
    once. A cut cell names its entry (`data-c`); the page's script makes it the cell's title."""

    def __init__(self) -> None:
        self._index: dict[str, int] = {}

    def ref(self, text: str) -> int:
        return self._index.setdefault(text, len(self._index))

    @property
    def values(self) -> list[str]:
        return list(self._index)


def _cell(value: object, texts: CellTexts) -> str:
    """A sample value; a long one is cut short in the cell, its title (from `texts`) holds it as
    stored."""
    text = _text(value)
    if len(text) <= CELL_SHOWN:
        return f'<td title="{e(text)}">{e(text)}</td>'
    return f'<td data-c="{texts.ref(text)}">{e(text[: CELL_SHOWN - 1])}…</td>'


def _badge(outcome: CheckOutcome, escalation: AlertLevel | None) -> str:
    word, detail = status_words(outcome, escalation)
    return f'<span class="badge {outcome.status.value}">{e(word)}</span> ' + (
        f'<span class="muted" title="{e(detail)}">{e(_cut(detail))}</span>' if detail else ""
    )


def _strip(check: CheckHistory, runs: int) -> str:
    dots = (
        f'<span class="dot {run.outcome.status.value}" '
        f'title="{e(when(run.at))}: {e(STATUS_WORDS[run.outcome.status.value])}"></span>'
        for run in check.runs[-runs:]
    )
    return f'<span class="strip">{"".join(dots)}</span>'


def _tags(tags: tuple[str, ...]) -> str:
    return "".join(f'<span class="tag">{e(tag)}</span>' for tag in tags)


def latest_table(checks: list[CheckHistory], anchors: dict[str, tuple[str, str]]) -> str:
    strip = COMPACT_STRIP_RUNS if len(checks) > COMPACT_FROM else STRIP_RUNS
    rows = []
    for check in checks:
        at, outcome = check.latest.at, check.latest.outcome
        anchor, key = anchors[check.name]
        word, detail = status_words(outcome, escalated(check))
        rows.append(
            f'<tr data-check="{key}"><td><a href="#{anchor}">{e(check.name)}</a></td>'
            f'<td class="{outcome.status.value}">{e(word)}</td><td>{folded(detail)}</td>'
            f'<td class="num">{e(counts(outcome))}</td><td class="num">{e(reading(outcome))}</td>'
            f"<td>{_strip(check, strip)}</td><td>{e(outcome.owner)}</td>"
            f"<td>{_tags(outcome.tags)}</td>"
            f"<td>{stamp(at)}</td></tr>"
        )
    return (
        '<div class="wrap"><table id="latest"><tr><th>check</th><th>status</th>'
        "<th>level or reason</th><th>failing / total</th><th>rows read</th><th>recent runs</th>"
        "<th>owner</th><th>tags</th><th>run</th></tr>" + "".join(rows) + "</table></div>"
    )


def _sample(check: CheckHistory, base: Path | None, compact: bool, texts: CellTexts) -> str:
    outcome = check.latest.outcome
    parts = []
    if outcome.sample:
        rows = COMPACT_SAMPLE_ROWS if compact else SAMPLE_ROWS
        every = list(dict.fromkeys(key for row in outcome.sample for key in row))
        columns = every[:COMPACT_SAMPLE_COLUMNS] if compact else every
        head = "".join(f"<th>{e(column)}</th>" for column in columns)
        body = "".join(
            "<tr>" + "".join(_cell(row.get(column), texts) for column in columns) + "</tr>"
            for row in outcome.sample[:rows]
        )
        more = len(outcome.sample) - rows
        hidden = len(every) - len(columns)
        parts.append(
            f'<div class="wrap"><table class="sample"><tr>{head}</tr>{body}</table></div>'
            + (f'<p class="muted">{more:,} more rows in the sample.</p>' if more > 0 else "")
            + (f'<p class="muted">{hidden:,} more columns in the sample.</p>' if hidden else "")
        )
    if outcome.failing_keys:
        keys = e(", ".join(_text(key) for key in outcome.failing_keys[:KEYS_SHOWN]))
        counted = outcome.describe_failing_keys() or f"{len(outcome.failing_keys):,} recorded"
        parts.append(
            f"<p>Failing keys ({min(len(outcome.failing_keys), KEYS_SHOWN)} shown of "
            f"{e(counted)}): {keys}</p>"
        )
    if (link := check.failing_rows) is not None:
        target = href(link.url, base)
        text = e(link.url) if target is None else f'<a href="{e(target)}">{e(target)}</a>'
        run = e(when(link.run_at))
        parts.append(f"<p>All sampled failing rows of the run of {run}: {text}</p>")
    if not parts:
        return ""
    latest = outcome.sample or outcome.failing_keys
    title = "Failing sample of the latest run" if latest else "Failing rows of an earlier run"
    return f"<h4>{title}</h4>" + "".join(parts)


def _incident(story: IncidentStory) -> str:
    items = []
    for event in story.events:
        if event.detail:  # what a person did: their words are data, escaped
            items.append(f'<li class="person">{e(when(event.at))}: {e(event.detail)}</li>')
            continue
        level = f", level {event.level.name}" if event.level is not None else ""
        if event.what in ("escalated", "lowered") and event.level is not None:
            level = f" to {event.level.name}"
        items.append(f'<li class="{event.what}">{e(when(event.at))}: {event.what}{level}</li>')
    state = "open" if story.open else "resolved"
    effective = story.effective_level
    now_level = (
        f", escalated to {effective.name}"
        if story.open and effective and effective > story.level
        else ""
    )
    return (
        f"<p>Incident {story.id}: {state}, {_runs(story.failing_runs)}, latest level "
        f"{story.level.name}{now_level}, peak {story.peak_level.name}</p>"
        f'<ol class="timeline">{"".join(items)}</ol>'
    )


def _runs(count: int) -> str:
    return f"{count} failing run" + ("" if count == 1 else "s")


def _history(check: CheckHistory, compact: bool) -> str:
    """The latest runs; compact: fewer, their reasons cut (the latest one is whole above)."""
    shown = COMPACT_HISTORY_ROWS if compact else HISTORY_ROWS
    reason = (lambda text: e(_cut(text))) if compact else folded
    rows = []
    for run in reversed(check.runs[-shown:]):
        outcome = run.outcome
        word = STATUS_WORDS[outcome.status.value]
        level = f"level {outcome.level.name}" if outcome.status is Status.FAILED else ""
        rows.append(
            f"<tr><td>{e(when(run.at))}</td><td class='{outcome.status.value}'>{e(word)}</td>"
            f"<td>{e(level)}</td><td class='num'>{e(counts(outcome))}</td>"
            f"<td class='num'>{e(reading(outcome))}</td><td>{reason(outcome.error or '')}</td></tr>"
        )
    earlier = len(check.runs) - shown
    return (
        f"<h4>Outcome history ({len(check.runs):,} runs)</h4>"
        '<div class="wrap"><table class="history"><tr><th>run</th><th>status</th><th>level</th>'
        "<th>failing / total</th><th>rows read</th><th>reason it could not run</th></tr>"
        + "".join(rows)
        + "</table></div>"
        + (f'<p class="muted">{earlier:,} earlier runs not shown.</p>' if earlier > 0 else "")
    )


def check_section(
    check: CheckHistory,
    anchor: str,
    key: str,
    plots: str,
    *,
    base: Path | None,
    texts: CellTexts,
    compact: bool = False,
) -> str:
    outcome = check.latest.outcome
    meta = [("owner", e(outcome.owner or "none")), ("tags", _tags(outcome.tags) or "none")]
    if outcome.scope:
        meta.append(("scope", e(outcome.scope)))
    if outcome.tolerance:
        meta.append(("tolerance", e(outcome.tolerance)))
    meta.append(("latest run", stamp(check.latest.at)))
    incidents = "".join(_incident(story) for story in reversed(check.incidents))
    return (
        f'<section class="check" id="{anchor}" data-check="{key}">'
        f'<h3><a href="#{anchor}">{e(check.name)}</a>{_badge(outcome, escalated(check))}</h3>'
        f'<p class="why">{e(outcome.description or "No description.")}</p>'
        '<dl class="meta">'
        + "".join(f"<dt>{name}</dt><dd>{value}</dd>" for name, value in meta)
        + "</dl>"
        + _sample(check, base, compact, texts)
        + (f'<h4>Over time</h4><div class="plots">{plots}</div>' if plots else "")
        + "<h4>Incidents</h4>"
        + (incidents or '<p class="muted">None recorded.</p>')
        + _history(check, compact)
        + "</section>"
    )
