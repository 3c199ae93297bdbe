"""The HTML report as text: what it shows per check, its time axes, links and escaping.
`test_report_browser.py` opens it in headless Chromium."""

from __future__ import annotations

import datetime as dt
import html
import json
import re
from html.parser import HTMLParser

import pytest

from checkers import AlertLevel, CheckOutcome, Status
from scheduling.report import outliers, status_words
from scheduling.report.data import CheckHistory, Run
from scheduling.report.plot import MAX_POINTS, Point, downsampled, time_ticks, value_ticks
from scheduling.report.sections import by_severity, href
from tests.scheduling.report_fixture import HOSTILE, build


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    return build(tmp_path_factory.mktemp("report"))


@pytest.fixture(scope="module")
def page(report):
    return report.read_text(encoding="utf-8")


class _Elements(HTMLParser):
    """Start tags with their attributes, and the JSON block's text."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.data = ""
        self._in_data = False

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        self._in_data = ("id", "report-data") in attrs

    def handle_data(self, data):
        if self._in_data:
            self.data += data

    def handle_endtag(self, tag):
        self._in_data = False


@pytest.fixture(scope="module")
def elements(page):
    parser = _Elements()
    parser.feed(page)
    return parser


def test_outliers_need_history_and_a_clear_deviation():
    assert outliers([1, 1, 1, 1, 1, 1]) == [False] * 6
    assert outliers([5, 6, 4, 7, 5, 204])[-1] is True
    assert outliers([5, 6, 4, 204]) == [False] * 4  # too little history


def test_time_ticks_are_round_dates():
    start = dt.datetime(2013, 12, 9, 7, tzinfo=dt.UTC)
    ticks, hourly = time_ticks(start, start + dt.timedelta(days=8))
    assert [f"{t:%b %d}" for t in ticks] == ["Dec 11", "Dec 13", "Dec 15", "Dec 17"]
    assert not hourly
    ticks, hourly = time_ticks(start, start + dt.timedelta(hours=10))
    assert hourly and [t.hour for t in ticks] == [9, 12, 15]
    ticks, _ = time_ticks(start, start + dt.timedelta(days=400))
    assert all(t.day == 1 for t in ticks) and 2 <= len(ticks) <= 6


def test_value_ticks_are_round_and_cover_the_values():
    assert value_ticks(943, 970) == [940, 950, 960, 970]
    assert value_ticks(0.004, 0.2163) == [0, 0.1, 0.2, 0.3]
    assert value_ticks(72, 72)[0] <= 72 <= value_ticks(72, 72)[-1]


def test_checks_are_listed_worst_first_then_most_recent_first():
    """The highest level first; at one level FAILED before could not run; tolerated before
    passed whenever they ran; then the latest run first (issue 29)."""
    t0 = dt.datetime(2026, 6, 1, tzinfo=dt.UTC)

    def history(name: str, status: Status, level: AlertLevel, hour: int) -> CheckHistory:
        failing = 1 if status in (Status.FAILED, Status.TOLERATED) else 0
        outcome = CheckOutcome(name, status, level=level, failing=failing, total=10)
        return CheckHistory(name, (Run(t0 + dt.timedelta(hours=hour), outcome),), (), None)

    checks = [
        history("passed_newest", Status.PASSED, AlertLevel.OK, 9),
        history("warning_old", Status.FAILED, AlertLevel.WARNING, 1),
        history("warning_new", Status.FAILED, AlertLevel.WARNING, 5),
        history("could_not_run", Status.ERROR, AlertLevel.ERROR, 7),
        history("failed_error", Status.FAILED, AlertLevel.ERROR, 3),
        history("critical_oldest", Status.FAILED, AlertLevel.CRITICAL, 0),
        history("tolerated", Status.TOLERATED, AlertLevel.OK, 8),
    ]
    assert [c.name for c in by_severity(checks)] == [
        "critical_oldest",
        "failed_error",
        "could_not_run",
        "warning_new",
        "warning_old",
        "tolerated",
        "passed_newest",
    ]


def test_a_long_history_is_drawn_downsampled_keeping_the_last_and_the_failed_runs():
    t0 = dt.datetime(2026, 6, 1, tzinfo=dt.UTC)
    runs = [Point(t0 + dt.timedelta(hours=n), float(n), n in (7, 501)) for n in range(1_000)]
    drawn = downsampled(runs, MAX_POINTS)
    assert MAX_POINTS <= len(drawn) <= MAX_POINTS + 3
    assert drawn == sorted(drawn, key=lambda p: p.at)  # in time order
    assert {7.0, 501.0, 999.0} <= {p.value for p in drawn}
    assert downsampled(runs[:50], MAX_POINTS) == runs[:50]


def test_one_vocabulary_for_statuses():
    failed = CheckOutcome("c", Status.FAILED, AlertLevel.ERROR, failing=2, total=16)
    assert status_words(failed) == ("FAILED", "level ERROR")
    assert status_words(failed, AlertLevel.CRITICAL) == (
        "FAILED",
        "level ERROR, escalated to CRITICAL",
    )
    broken = CheckOutcome("c", Status.ERROR, AlertLevel.ERROR, error="table missing")
    assert status_words(broken) == ("could not run", "table missing")


def test_only_web_and_local_links_are_links(tmp_path):
    rows = tmp_path / "state" / "rows.jsonl"
    assert href(rows.as_uri(), tmp_path / "site") == "../state/rows.jsonl"
    assert href("https://dq.example/rows.jsonl", tmp_path) == "https://dq.example/rows.jsonl"
    assert href("javascript:alert(1)", tmp_path) is None


def test_report_is_self_contained(page, elements):
    assert [t for t, a in elements.tags if t == "script"] == ["script", "script"]
    assert [a.get("type") for t, a in elements.tags if t == "script"] == ["application/json", None]
    loads = [a for t, a in elements.tags if t in ("img", "link", "iframe") or "src" in a]
    assert loads == []
    assert re.findall(r"https?://", page.replace("http://www.w3.org/2000/svg", "")) == []


def test_every_data_value_is_escaped(page, elements):
    assert HOSTILE not in page and "&lt;script&gt;document.title" in page
    assert "<b>" not in page  # a sample value
    raw = page.split('id="report-data">', 1)[1].split("</script>", 1)[0]
    assert "<" not in raw and ">" not in raw and "\\u003cscript\\u003e" in raw
    data = json.loads(elements.data)
    hostile = next(c for c in data["checks"].values() if c["owner"] == HOSTILE)
    assert hostile["tags"] == [HOSTILE] and hostile["name"].endswith(HOSTILE)
    options = [a["value"] for t, a in elements.tags if t == "option"]
    assert HOSTILE in options  # attribute values escaped, read back intact


def test_latest_table_and_sections(page, elements):
    latest = page.split('<table id="latest">', 1)[1].split("</table>", 1)[0]
    # which threshold set the level, as recorded with the outcome
    set_by = "level ERROR: 31 failing &gt; warning threshold 10, &lt;= error threshold 1,000"
    assert f'<td class="failed">FAILED</td><td>{set_by}, escalated to CRITICAL</td>' in latest
    assert '<td class="error">could not run</td><td>table planes is missing &lt;' in latest
    assert '<td class="num">118 (1 of 10 partitions)</td>' in latest  # the latest run's reading
    anchors = [a["href"][1:] for t, a in elements.tags if t == "a" and a["href"][0] == "#"]
    sections = [a["id"] for t, a in elements.tags if t == "section"]
    assert set(sections) <= set(anchors) and len(sections) == 3
    assert "check-flights_have_times" in sections


def test_a_section_shows_history_incidents_sample_and_plots(report, page):
    flights = page.split('id="check-flights_have_times"', 1)[1].split("</section>", 1)[0]
    assert "Outcome history (10 runs)" in flights and flights.count("<tr>") >= 10
    assert "2013-12-15 07:00: escalated to CRITICAL" in flights
    assert "2013-12-16 07:00: resolved" in flights
    assert "2013-12-17 07:00: opened, level ERROR" in flights
    sample = flights.split('<table class="sample">', 1)[1].split("</table>", 1)[0]
    assert "<th>tailnum</th>" in sample and '<td title="N24211">N24211</td>' in sample
    # a value longer than its cell: cut, and kept whole once in the page's data for its title
    cut = re.search(r'<td data-c="(\d+)">([^<]*)…</td>', sample)
    assert cut is not None and HOSTILE.startswith(html.unescape(cut[2]))
    raw = page.split('id="report-data">', 1)[1].split("</script>", 1)[0]
    assert json.loads(raw)["cells"][int(cut[1])] == HOSTILE
    assert re.search(r"Failing keys \(1 shown of \d+ distinct keys \(first 1 listed\)\)", flights)
    link = re.search(r'<a href="([^"]+\.jsonl)">', flights)
    assert link is not None and not link[1].startswith("file:")
    assert (report.parent / link[1]).is_file()
    captions = re.findall(r"<figcaption>([^<]+)</figcaption>", flights)
    assert captions == ["failing share", "rows read", "failing", "rows"]
    assert page.count("<svg") == 7  # and weather: failing share, rows read, hours
    assert ">Dec 11</text>" in flights and ">30%</text>" in flights  # dated x, valued y
