"""The HTML report, rendered by headless Chromium: it renders, shows the plots, logs no console
errors, and values from the data are escaped."""

from __future__ import annotations

import datetime as dt
import re
import shutil
import subprocess

import pytest

from alerting import EscalationPolicy, handle_outcome
from checkers import AlertLevel, CheckOutcome, Status
from checkers.storage import project_database
from scheduling.report import outliers, write_report

T0 = dt.datetime(2013, 12, 9, 7, 0, tzinfo=dt.UTC)
HOSTILE = "<script>document.title='pwned'</script><img src=x onerror=alert(1)>"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def _outcome(day: int, flights: int, failing: int) -> CheckOutcome:
    status = Status.FAILED if failing > 10 else Status.PASSED
    return CheckOutcome(
        check="flights_have_times",
        status=status,
        level=AlertLevel.ERROR if status is Status.FAILED else AlertLevel.OK,
        failing=failing,
        total=flights,
        unexcused=failing,
        description=HOSTILE,
        metrics={"failing": failing, "rows": flights},
        reading={"rows_read": flights // 8, "partitions_read": 1, "partitions": day + 1},
        failing_keys=(HOSTILE,) if failing else (),
        started_at=T0 + dt.timedelta(days=day),
    )


@pytest.fixture
def report(tmp_path):
    engine = project_database(f"sqlite:///{tmp_path / 'dq.db'}")
    policy = EscalationPolicy(routes={"console": AlertLevel.WARNING})
    series = [(960, 5), (955, 6), (970, 4), (962, 7), (958, 5), (943, 204), (954, 11), (968, 5)]
    for day, (flights, failing) in enumerate(series):
        handle_outcome(engine, _outcome(day, flights, failing), policy, T0 + dt.timedelta(days=day))
    return write_report(engine, tmp_path / "report.html", now=T0 + dt.timedelta(days=8))


def test_outliers_need_history_and_a_clear_deviation():
    assert outliers([1, 1, 1, 1, 1, 1]) == [False] * 6
    assert outliers([5, 6, 4, 7, 5, 204])[-1] is True
    assert outliers([5, 6, 4, 204]) == [False] * 4  # too little history


def test_report_is_self_contained_and_escaped(report):
    page = report.read_text()
    assert "<script" not in page and "http://" not in page.replace("http://www.w3.org", "")
    assert "&lt;script&gt;" in page and HOSTILE not in page
    assert page.count("<svg") == 4  # failing share, rows read, failing, rows
    assert "<td>121 (1 of 8 partitions)</td>" in page  # the latest run read one new day


def test_report_renders_in_headless_chromium(report, tmp_path):
    assert CHROMIUM is not None, "headless Chromium is missing: `make test` installs it"
    result = subprocess.run(
        [
            CHROMIUM,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            f"--user-data-dir={tmp_path / 'profile'}",
            "--enable-logging=stderr",
            "--v=0",
            "--dump-dom",
            report.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    dom = result.stdout
    assert result.returncode == 0, result.stderr[-2000:]
    assert "<title>dq-checkers report</title>" in dom  # the hostile script never ran
    assert "Latest outcome per check" in dom and "flights_have_times" in dom
    assert len(re.findall(r"<polyline", dom)) == 4 and "<circle" in dom  # rows read too
    assert "&lt;script&gt;document.title" in dom and '<img src="x"' not in dom
    console = [line for line in result.stderr.splitlines() if "CONSOLE" in line]
    assert console == []
