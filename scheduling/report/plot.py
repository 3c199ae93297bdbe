"""The report's plots: a check's numeric series over time, drawn as inline SVG with dated x ticks,
value ticks, failing runs and outliers marked. Each plot's hover labels go to the page's JSON block;
the SVG keeps a <title> per point for screen readers."""

from __future__ import annotations

import datetime as dt
import html
import math
import statistics
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from checkers.outcome import CheckOutcome, Status

MAX_SERIES = 6
ROWS_READ = "rows read"
SHARE = "failing share"
Z_OUTLIER = 3.0
WIDTH, HEIGHT = 440, 190
LEFT, RIGHT, TOP, BOTTOM = 52, 14, 12, 40
MAX_TICKS = 6
#: Points drawn per plot; a longer history is downsampled.
MAX_POINTS = 120
e = html.escape

MINUTE, HOUR, DAY = dt.timedelta(minutes=1), dt.timedelta(hours=1), dt.timedelta(days=1)
SPANS = tuple(MINUTE * m for m in (5, 15, 30)) + tuple(HOUR * h for h in (1, 3, 6, 12))
SPANS += tuple(DAY * d for d in (1, 2, 7, 14))
MONTH_SPANS = (1, 2, 3, 6, 12)
MONDAY = dt.datetime(1970, 1, 5, tzinfo=dt.UTC)


@dataclass(frozen=True)
class Point:
    at: dt.datetime
    value: float
    failed: bool  # the run FAILED or could not run


Series = dict[str, list[Point]]


def series_of(records: Sequence[tuple[dt.datetime, CheckOutcome]]) -> Series:
    """A check's numeric series, name -> points in time order: failing share, rows read and up
    to a few metrics that vary."""
    series: Series = defaultdict(list)
    for at, outcome in records:
        bad = outcome.status in (Status.FAILED, Status.ERROR)
        if outcome.total:
            series[SHARE].append(Point(at, outcome.failing / outcome.total, bad))
        if (read := outcome.reading.get("rows_read")) is not None:
            series[ROWS_READ].append(Point(at, float(read), bad))
        for name, value in outcome.metrics.items():
            if (
                isinstance(value, int | float)
                and not isinstance(value, bool)
                and math.isfinite(value)
            ):
                series[name].append(Point(at, float(value), bad))
    varying = {
        name: points
        for name, points in series.items()
        if len({p.value for p in points}) > 1 or name in (SHARE, ROWS_READ)
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


def value_text(name: str, value: float) -> str:
    """A value as the tooltip shows it."""
    if name == SHARE:
        return f"{value:.2%}"
    if float(value).is_integer() and abs(value) < 1e15:
        return f"{int(value):,}"
    return f"{value:,.6g}"


def tick_text(name: str, value: float) -> str:
    """A value as an axis tick shows it (short)."""
    if name == SHARE:
        return f"{value * 100:g}%"
    for size, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= size:
            return f"{round(value / size, 6):g}{suffix}"
    return f"{round(value, 9):g}"


def value_ticks(low: float, high: float) -> list[float]:
    """About five round values covering [low, high] (1, 2, 2.5 or 5 times a power of ten apart)."""
    if high == low:
        margin = abs(low) / 10 or 1
        low, high = low - margin, high + margin
    raw = (high - low) / 4
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw)
    first, last = math.floor(low / step), math.ceil(high / step)
    return [round(i * step, 12) for i in range(first, last + 1)]


def _months(start: dt.datetime, end: dt.datetime, every: int) -> list[dt.datetime]:
    index = start.year * 12 + start.month - 1
    index += -index % every
    ticks = []
    while (at := dt.datetime(index // 12, index % 12 + 1, 1, tzinfo=dt.UTC)) <= end:
        if at >= start:
            ticks.append(at)
        index += every
    return ticks


def time_ticks(start: dt.datetime, end: dt.datetime) -> tuple[list[dt.datetime], bool]:
    """At most six round moments in [start, end] (UTC) and whether they fall within days (then
    each tick shows its hour)."""
    for span in SPANS:
        origin = MONDAY if span >= 7 * DAY else dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
        first = origin + math.ceil((start - origin) / span) * span
        if (end - first) // span + 1 <= MAX_TICKS:
            count = (end - first) // span + 1
            return [first + i * span for i in range(max(count, 0))], span < DAY
    for every in MONTH_SPANS:
        if len(ticks := _months(start, end, every)) <= MAX_TICKS:
            return ticks, False
    return _months(start, end, 12 * math.ceil((end.year - start.year + 1) / MAX_TICKS)), False


def _tick_lines(
    at: dt.datetime, previous: dt.datetime | None, hourly: bool, monthly: bool
) -> list[str]:
    """A time tick's label: its date, or its hour with the date below when the day changes."""
    if monthly:
        return [f"{at:%b %Y}"]
    if not hourly:
        return [f"{at:%b %d}"]
    if previous is None or previous.date() != at.date():
        return [f"{at:%H:%M}", f"{at:%b %d}"]
    return [f"{at:%H:%M}"]


@dataclass(frozen=True)
class _Frame:
    """Maps times and values to SVG coordinates inside the axes."""

    start: dt.datetime
    end: dt.datetime
    low: float
    high: float

    def x(self, at: dt.datetime) -> float:
        return LEFT + (at - self.start) / (self.end - self.start) * (WIDTH - LEFT - RIGHT)

    def y(self, value: float) -> float:
        inner = HEIGHT - TOP - BOTTOM
        return TOP + inner - (value - self.low) / (self.high - self.low) * inner


def _value_axis(frame: _Frame, name: str, ticks: Sequence[float]) -> str:
    return "".join(
        f'<line x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{frame.y(t):.1f}" y2="{frame.y(t):.1f}" '
        f'class="grid"/><text x="{LEFT - 6}" y="{frame.y(t) + 3.5:.1f}" class="ytick">'
        f"{e(tick_text(name, t))}</text>"
        for t in ticks
    )


def _time_axis(frame: _Frame) -> str:
    moments, hourly = time_ticks(frame.start, frame.end)
    monthly = len(moments) > 1 and moments[1] - moments[0] >= 28 * DAY
    base, parts = HEIGHT - BOTTOM, []
    for i, moment in enumerate(moments):
        lines = _tick_lines(moment, moments[i - 1] if i else None, hourly, monthly)
        at = frame.x(moment)
        parts.append(
            f'<line x1="{at:.1f}" x2="{at:.1f}" y1="{base}" y2="{base + 4}" class="axis"/>'
            + "".join(
                f'<text x="{at:.1f}" y="{base + 15 + 11 * n}" class="xtick">{e(text)}</text>'
                for n, text in enumerate(lines)
            )
        )
    return "".join(parts)


#: A point's kind in the hover data (the page's script words it: "· failed run", "· outlier").
KINDS = {"ok": 0, "failed": 1, "outlier": 2}


def _marks(
    frame: _Frame, name: str, points: Sequence[Point], titles: bool
) -> tuple[str, list[list[object]]]:
    """The line, a circle per point (failing runs and outliers larger and coloured) and the
    hover data: per point [value, minutes since 1970 (UTC), kind] (KINDS), which the page's
    script words as "21.63% · Dec 14 2013 07:00 UTC · failed run" beside the point's circle
    (the circles are in the same order). Coordinates are
    whole SVG units: finer is invisible and costs bytes on a page of 500 checks."""
    xs = [round(frame.x(p.at)) for p in points]
    ys = [round(frame.y(p.value)) for p in points]
    line = " ".join(f"{x},{y}" for x, y in zip(xs, ys, strict=True))
    parts = [f'<polyline class="line" points="{line}"/>']
    hover: list[list[object]] = []
    flags = outliers([p.value for p in points])
    for point, outlier, px, py in zip(points, flags, xs, ys, strict=True):
        kind = "failed" if point.failed else "outlier" if outlier else "ok"
        minutes = int(point.at.timestamp() // 60)
        hover.append([value_text(name, point.value), minutes, KINDS[kind]])
        circle = f'<circle cx="{px}" cy="{py}" r="{2.5 if kind == "ok" else 4.5}" class="pt {kind}"'
        if titles:
            note = " · failed run" if point.failed else " · outlier" if outlier else ""
            label = f"{value_text(name, point.value)} · {point.at:%b %d %Y %H:%M} UTC{note}"
            parts.append(f"{circle}><title>{e(label)}</title></circle>")
        else:
            parts.append(f"{circle}/>")
    return "".join(parts), hover


def downsampled(points: Sequence[Point], most: int) -> list[Point]:
    """At most `most` points, evenly spaced over the runs, keeping the last one and the failed
    runs while they are few (a long history would otherwise be megabytes of circles)."""
    if len(points) <= most:
        return list(points)
    step = len(points) / most
    kept = {int(i * step) for i in range(most)} | {len(points) - 1}
    failed = {i for i, p in enumerate(points) if p.failed}
    if len(kept | failed) <= 2 * most:
        kept |= failed
    return [p for i, p in enumerate(points) if i in kept]


def svg_plot(
    plot_id: str, name: str, points: Sequence[Point], *, most: int = MAX_POINTS, titles: bool = True
) -> tuple[str, list[list[object]]]:
    """The plot's HTML (`data-plot` names it in the page's JSON) and its hover data (at most
    `most` points, see `downsampled`); `titles`: each point's value also as its <title>, for a
    page read without its script."""
    points = downsampled(points, most)
    start, end = points[0].at, points[-1].at
    if start == end:
        start, end = start - 12 * HOUR, end + 12 * HOUR
    ticks = value_ticks(min(p.value for p in points), max(p.value for p in points))
    if name == SHARE:
        ticks = [t for t in ticks if t >= 0] or [0.0]
    frame = _Frame(start, end, ticks[0], ticks[-1] if ticks[-1] > ticks[0] else ticks[0] + 1)
    marks, hover = _marks(frame, name, points, titles)
    inner_w, inner_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    svg = (
        f'<figure class="plot"><figcaption>{e(name)}</figcaption>'
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {HEIGHT}" width="{WIDTH}" '
        f'height="{HEIGHT}" role="img" aria-label="{e(name)} over time" data-plot="{plot_id}">'
        f'<rect x="{LEFT}" y="{TOP}" width="{inner_w}" height="{inner_h}" class="frame"/>'
        + _value_axis(frame, name, ticks)
        + _time_axis(frame)
        + marks
        + f'<line class="guide" y1="{TOP}" y2="{TOP + inner_h}" x1="-9" x2="-9"/>'
        + "</svg></figure>"
    )
    return svg, hover
