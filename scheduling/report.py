"""The HTML report: one self-contained page (inline CSS and SVG, no scripts, no network) with the
latest outcome per check, open and resolved incidents, and plots of each check's metric history
with failing runs and statistical outliers marked. Every value from the data is escaped."""

from __future__ import annotations

import datetime as dt
import html
import math
import statistics
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from checkers.levels import AlertLevel
from checkers.outcome import CheckOutcome, Status
from checkers.storage import as_utc, incidents, runs

MAX_SERIES = 5
ROWS_READ = "rows read"
Z_OUTLIER = 3.0
e = html.escape

CSS = """
body{font-family:system-ui,sans-serif;margin:2rem;color:#222}
table{border-collapse:collapse;margin:1rem 0}
td,th{border:1px solid #ccc;padding:.3rem .6rem;text-align:left}
.passed{color:#1a7f37}.tolerated{color:#7d6608}
.failed{color:#b42318;font-weight:600}.error{color:#8a2be2;font-weight:600}
.plot{display:inline-block;margin:.5rem 1rem .5rem 0}.plot h4{margin:.2rem 0;font-weight:500}
"""


Series = dict[str, list[tuple[dt.datetime, float, bool]]]


def _points(records: Sequence[tuple[dt.datetime, CheckOutcome]]) -> Series:
    """Numeric metric series of one check: name -> [(time, value, run failed)]."""
    series: Series = defaultdict(list)
    for at, outcome in records:
        bad = outcome.status in (Status.FAILED, Status.ERROR)
        if outcome.total:
            series["failing share"].append((at, outcome.failing / outcome.total, bad))
        if (read := outcome.reading.get("rows_read")) is not None:
            series[ROWS_READ].append((at, float(read), bad))
        for name, value in outcome.metrics.items():
            if (
                isinstance(value, int | float)
                and not isinstance(value, bool)
                and math.isfinite(value)
            ):
                series[name].append((at, float(value), bad))
    varying = {
        k: v
        for k, v in series.items()
        if len({p[1] for p in v}) > 1 or k in ("failing share", ROWS_READ)
    }
    return dict(list(varying.items())[:MAX_SERIES])


def outliers(values: Sequence[float]) -> list[bool]:
    """Points more than 3 standard deviations from the mean of the points before them (at least
    five earlier points needed)."""
    flags = []
    for i, value in enumerate(values):
        history = values[:i]
        if len(history) < 5:
            flags.append(False)
            continue
        mean, spread = statistics.fmean(history), statistics.pstdev(history)
        flags.append(spread > 0 and abs(value - mean) > Z_OUTLIER * spread)
    return flags


def svg_plot(name: str, points: Sequence[tuple[dt.datetime, float, bool]]) -> str:
    width, height, pad = 360, 140, 28
    times = [p[0].timestamp() for p in points]
    values = [p[1] for p in points]
    t0, t1 = min(times), max(times)
    v0, v1 = min(values), max(values)

    def x(t: float) -> float:
        return pad + (t - t0) / ((t1 - t0) or 1) * (width - 2 * pad)

    def y(v: float) -> float:
        return height - pad - (v - v0) / ((v1 - v0) or 1) * (height - 2 * pad)

    line = " ".join(f"{x(t):.1f},{y(v):.1f}" for t, v in zip(times, values, strict=True))
    marks = []
    for (at, value, failed), outlier in zip(points, outliers(values), strict=True):
        colour = "#b42318" if failed else "#e36c09" if outlier else "#2f6fdf"
        radius = 4 if failed or outlier else 2.5
        label = (
            f"{at:%Y-%m-%d %H:%M} {value:.6g}"
            + (" failed" if failed else "")
            + (" outlier" if outlier else "")
        )
        marks.append(
            f'<circle cx="{x(at.timestamp()):.1f}" cy="{y(value):.1f}" r="{radius}" '
            f'fill="{colour}"><title>{e(label)}</title></circle>'
        )
    return (
        f'<div class="plot"><h4>{e(name)}</h4>'
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'role="img" aria-label="{e(name)}">'
        f'<rect width="{width}" height="{height}" fill="#fafafa" stroke="#ddd"/>'
        f'<text x="4" y="14" font-size="10">{v1:.6g}</text>'
        f'<text x="4" y="{height - 6}" font-size="10">{v0:.6g}</text>'
        f'<polyline fill="none" stroke="#2f6fdf" stroke-width="1.5" points="{line}"/>'
        + "".join(marks)
        + "</svg></div>"
    )


def reading(outcome: CheckOutcome) -> str:
    """Rows the run read, and for incremental checks how many of the partitions were read."""
    read = outcome.reading
    if "rows_read" not in read:
        return ""
    text = f"{read['rows_read']:,}"
    if "partitions" in read:
        text += f" ({read.get('partitions_read', 0):,} of {read['partitions']:,} partitions)"
    return text


def _latest_table(latest: dict[str, tuple[dt.datetime, CheckOutcome]]) -> str:
    rows = []
    for name, (at, o) in sorted(latest.items()):
        counts = "" if o.status is Status.ERROR else f"{o.failing:,} / {o.total:,}"
        detail = o.error or ", ".join(map(str, o.failing_keys[:8]))
        level = o.level.name if o.level is not AlertLevel.OK else ""
        rows.append(
            f"<tr><td>{e(name)}</td><td class='{o.status.value}'>{e(o.status.value)}</td>"
            f"<td>{e(level)}</td><td>{e(counts)}</td><td>{e(reading(o))}</td><td>{e(detail)}</td>"
            f"<td>{at:%Y-%m-%d %H:%M}</td><td>{e(o.description)}</td></tr>"
        )
    return (
        "<table><tr><th>check</th><th>status</th><th>level</th><th>failing / total</th>"
        "<th>rows read</th><th>keys or error</th><th>run</th><th>why it matters</th></tr>"
        + "".join(rows)
        + "</table>"
    )


def _when(value: dt.datetime | None) -> str:
    moment = as_utc(value)
    return moment.strftime("%Y-%m-%d %H:%M") if moment else ""


def _incident_table(engine: Engine) -> str:
    with engine.connect() as connection:
        rows = connection.execute(sa.select(incidents).order_by(incidents.c.opened_at)).mappings()
        items = [
            f"<tr><td>{e(r['check_name'])}</td><td>{e(r['status'])}</td>"
            f"<td>{e(AlertLevel(r['peak_level']).name)}</td><td>{r['failing_runs']}</td>"
            f"<td>{_when(r['opened_at'])}</td><td>{_when(r['resolved_at'])}</td></tr>"
            for r in rows
        ]
    return (
        "<table><tr><th>check</th><th>status</th><th>peak level</th><th>failing runs</th>"
        "<th>opened</th><th>resolved</th></tr>" + "".join(items) + "</table>"
    )


def render_report(engine: Engine, *, now: dt.datetime, title: str = "dq-checkers report") -> str:
    with engine.connect() as connection:
        rows = connection.execute(
            sa.select(
                runs.c.check_name, runs.c.outcome, runs.c.started_at, runs.c.window_end
            ).order_by(runs.c.id)
        ).all()
    per_check: dict[str, list[tuple[dt.datetime, CheckOutcome]]] = defaultdict(list)
    for name, text, started, window_end in rows:
        at = as_utc(window_end) or as_utc(started) or now
        per_check[name].append((at, CheckOutcome.from_json(text)))
    latest = {name: records[-1] for name, records in per_check.items()}
    plots = []
    for name, records in sorted(per_check.items()):
        series = _points(records)
        charts = "".join(svg_plot(label, pts) for label, pts in series.items() if len(pts) > 1)
        if charts:
            plots.append(f"<h3>{e(name)}</h3>{charts}")
    statuses: dict[str, int] = defaultdict(int)
    for _, outcome in latest.values():
        statuses[outcome.status.value] += 1
    summary = ", ".join(f"{count} {status}" for status, count in sorted(statuses.items()))
    return (
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
        f"<title>{e(title)}</title><style>{CSS}</style></head><body>"
        f"<h1>{e(title)}</h1><p>Generated {now:%Y-%m-%d %H:%M} UTC from {len(rows)} runs of "
        f"{len(per_check)} checks: {e(summary or 'no runs yet')}.</p>"
        f"<h2>Latest outcome per check</h2>{_latest_table(latest)}"
        f"<h2>Incidents</h2>{_incident_table(engine)}"
        "<h2>Metric history</h2><p>Red: failing runs. Orange: more than 3 standard deviations "
        "from the earlier runs.</p>" + "".join(plots) + "</body></html>"
    )


def write_report(engine: Engine, path: str | Path, *, now: dt.datetime) -> Path:
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(render_report(engine, now=now), encoding="utf-8")
    return target
