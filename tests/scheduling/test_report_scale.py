"""The report of 500 checks with long histories (issue 29): under its documented size, and in
headless Chromium (one launch) the summary is visible, the worst check comes first, nothing runs
off the page's right edge (a sample scrolls in its own box), times are in UTC with the
viewer's zone on hover and the console stays clean."""

from __future__ import annotations

import datetime as dt
import shutil

import pytest
from playwright.sync_api import ConsoleMessage, expect, sync_playwright

from checkers import AlertLevel, CheckOutcome, Status
from scheduling.report import REPORT_BYTES_500
from scheduling.report.data import CheckHistory, Run
from scheduling.report.render import render_histories

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
T0 = dt.datetime(2026, 6, 1, tzinfo=dt.UTC)
CHECKS, RUNS = 500, 200
WIDE = {f"column_{n:03}": "x" * 200 for n in range(40)}  # a bounded sample: 200-char cells


def _outcome(check: int, run: int) -> CheckOutcome:
    kind = check % 10
    failing = (check * 7 + run) % 50 if kind in (1, 2, 3) else 0
    status = Status.FAILED if failing else Status.PASSED
    level = AlertLevel.WARNING if status is Status.FAILED else AlertLevel.OK
    error = None
    if kind == 4:
        status, level = Status.ERROR, AlertLevel.ERROR
        error = "source orders is malformed: " + "a reason that goes on and on " * 60
    if check == 321 and run == RUNS - 1:  # the worst: the only CRITICAL, though not the newest
        status, level, failing = Status.FAILED, AlertLevel.CRITICAL, 99
    return CheckOutcome(
        check=f"check_{check:03}",
        status=status,
        level=level,
        failing=failing,
        total=1_000,
        unexcused=failing,
        error=error,
        metrics={"failing": failing, "rows": 1_000 + run},
        sample=(WIDE,) * 3 if status is Status.FAILED and run == RUNS - 1 else (),
        owner=f"team-{check % 7}",
        tags=("daily",),
    )


def _histories() -> list[CheckHistory]:
    checks = []
    for check in range(CHECKS):
        runs = tuple(
            Run(T0 + dt.timedelta(hours=run, minutes=check % 60), _outcome(check, run))
            for run in range(RUNS)
        )
        checks.append(CheckHistory(f"check_{check:03}", runs, (), None))
    return checks


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    path = tmp_path_factory.mktemp("report_scale") / "report.html"
    now = T0 + dt.timedelta(hours=RUNS)
    path.write_text(render_histories(_histories(), now=now, title="500 checks"), "utf-8")
    return path


def test_the_report_of_500_checks_stays_under_its_documented_size(report):
    size = report.stat().st_size
    print(f"report of {CHECKS} checks x {RUNS} runs: {size:,} bytes")
    assert size < REPORT_BYTES_500


def test_it_opens_with_the_summary_first_and_the_worst_check_first(report):
    assert CHROMIUM is not None, "headless Chromium is missing: `make test` installs it"
    said: list[str] = []

    def console(message: ConsoleMessage) -> None:
        if message.type in ("error", "warning"):
            said.append(f"{message.type}: {message.text}")

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM)
        # a viewer in Tokyo: times stay in UTC on the page, hovering shows Tokyo's time
        page = browser.new_page(viewport={"width": 1280, "height": 900}, timezone_id="Asia/Tokyo")
        page.on("console", console)
        page.on("pageerror", lambda error: said.append(f"page error: {error}"))
        page.goto(report.as_uri())
        expect(page.locator(".cards")).to_be_in_viewport()
        expect(page.locator(".cards")).to_contain_text("FAILED at CRITICAL")
        expect(page.locator("#latest tr[data-check]").first).to_contain_text("check_321")
        expect(page.locator("section.check").first).to_have_id("check-check_321")
        overflow = page.evaluate(
            "document.documentElement.scrollWidth - document.documentElement.clientWidth"
        )
        folded = page.locator("#latest details").count()
        time = page.locator("section.check time").first
        written, hover = time.inner_text(), time.get_attribute("title")
        # the sample scrolls in its own box, wider than the window, without widening the page
        box = page.evaluate(
            """() => { const box = document.querySelector('.wrap:has(table.sample)');
              return [getComputedStyle(box).overflowX, box.scrollWidth, box.clientWidth]; }"""
        )
        whole = page.locator("table.sample td[data-c]").first.get_attribute("title")
        browser.close()
    assert overflow <= 0, f"the page is {overflow}px wider than the window"
    assert folded == CHECKS // 10  # each long reason folded
    assert written.endswith(" UTC") and "GMT+0900" in (hover or ""), (written, hover)
    assert box[0] in ("auto", "scroll") and box[1] > box[2], box
    assert whole == WIDE["column_000"]  # a cut cell's whole value, kept once for 140 samples
    assert said == []
