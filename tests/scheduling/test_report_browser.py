"""The HTML report opened in headless Chromium (Debian's, driven by Playwright; no download, no
network): it renders, a hover shows a value with its date, the filters hide and show checks, the
console stays clean, and the hostile values in the data never run."""

from __future__ import annotations

import shutil

import pytest
from playwright.sync_api import ConsoleMessage, Page, expect, sync_playwright

from tests.scheduling.report_fixture import HOSTILE, build

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
FLIGHTS, WEATHER = "#check-flights_have_times", "#check-weather_complete"
PLANES = 'section[id^="check-planes_known"]'


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    return build(tmp_path_factory.mktemp("report"))


@pytest.fixture(scope="module")
def browser():
    assert CHROMIUM is not None, "headless Chromium is missing: `make test` installs it"
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM)
        yield browser
        browser.close()


@pytest.fixture
def opened(browser, report):
    """The report in a fresh page, and what its console and dialogs said."""
    context = browser.new_context(viewport={"width": 1280, "height": 900}, offline=True)
    page = context.new_page()
    said: list[str] = []

    def console(message: ConsoleMessage) -> None:
        if message.type in ("error", "warning"):
            said.append(f"{message.type}: {message.text}")

    page.on("console", console)
    page.on("pageerror", lambda error: said.append(f"page error: {error}"))
    page.on("dialog", lambda dialog: (said.append(f"dialog: {dialog.message}"), dialog.dismiss()))
    page.goto(report.as_uri())
    expect(page.locator("#filters")).to_be_visible()  # the script ran
    yield page, said
    context.close()


def test_renders_and_takes_a_screenshot(opened, tmp_path):
    page, said = opened
    shot = tmp_path / "report.png"
    page.screenshot(path=shot, full_page=True)
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 50_000
    expect(page.locator("#latest tr")).to_have_count(4)
    expect(page.locator("section.check svg")).to_have_count(7)
    assert said == []


def test_hovering_a_point_shows_its_value_and_date(opened):
    page, said = opened
    tip = page.locator("#tip")
    expect(tip).to_be_hidden()
    share = page.locator(f'{FLIGHTS} svg[aria-label="failing share over time"]')
    share.locator("circle.pt").nth(5).hover()
    expect(tip).to_be_visible()
    expect(tip).to_have_text("21.63% · Dec 14 2013 07:00 UTC · failed run")
    expect(share.locator("circle.pt").nth(5)).to_have_class("pt failed hot")
    page.mouse.move(5, 5)
    expect(tip).to_be_hidden()
    assert said == []


def _choose(page: Page, name: str, value: str) -> None:
    page.locator(f'#filters select[name="{name}"]').select_option(value)


def test_filters_hide_the_checks_that_do_not_match(opened):
    page, said = opened
    shown = page.locator("#shown")
    expect(shown).to_have_text("3 of 3 checks shown")
    _choose(page, "owner", "weather-team")
    expect(page.locator(WEATHER)).to_be_visible()
    expect(page.locator(FLIGHTS)).to_be_hidden()
    expect(page.locator(PLANES)).to_be_hidden()
    expect(page.locator("#latest tr[data-check]:visible")).to_have_count(1)
    expect(shown).to_have_text("1 of 3 checks shown")
    _choose(page, "owner", "")
    _choose(page, "tag", "daily")
    expect(page.locator(FLIGHTS)).to_be_visible()
    expect(page.locator(WEATHER)).to_be_visible()
    expect(page.locator(PLANES)).to_be_hidden()
    _choose(page, "status", "failed")
    expect(page.locator(WEATHER)).to_be_hidden()
    expect(page.locator(FLIGHTS)).to_be_visible()
    page.locator("#reset").click()
    _choose(page, "tag", HOSTILE)  # an option whose value came from the data
    expect(page.locator(PLANES)).to_be_visible()
    expect(shown).to_have_text("1 of 3 checks shown")
    assert said == []


def test_data_values_are_shown_as_text_and_never_run(opened):
    page, said = opened
    assert page.title() == "dq-checkers report"
    assert page.locator("img").count() == 0
    assert page.evaluate("document.scripts.length") == 2
    planes = page.locator(PLANES)
    expect(planes.locator("h3 a")).to_have_text(f"planes_known{HOSTILE}")
    expect(planes.locator("dl.meta dd").first).to_have_text(HOSTILE)  # the owner
    sample = page.locator(f"{FLIGHTS} table.sample")
    expect(sample).to_contain_text(HOSTILE)
    expect(sample.locator("td[data-c]").first).to_have_attribute("title", HOSTILE)  # cut, whole
    assert said == []
