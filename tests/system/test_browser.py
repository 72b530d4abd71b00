"""The app in a real browser: notebooks/app.ipynb served by Voila, driven by Playwright.

Chromium is Debian's (``/usr/bin/chromium``, or ``$LARES_CHROMIUM``);
``make test`` installs it with apt when it is missing. Playwright's own
browser download is never used. Voila runs on a free loopback port, started
and stopped by the test. Screenshots go to the test's tmp_path.

What a person would do: type "turn on the light for my dog", press Run,
answer nothing, and see the transcript fill and the bedroom shown lit; then
run the daytime instruction and answer the agent's question in the page.
The map is read through its words (``li.lares-room[data-lit]``), not pixels.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from voila_server import voila

ROOT = Path(__file__).resolve().parents[2]
APP = ROOT / "notebooks" / "app.ipynb"
CHROMIUM = os.environ.get("LARES_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run"]
TIMEOUT_MS = 60_000

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=f"no Chromium at {CHROMIUM}: `make test` installs it "
                       "with apt as root; elsewhere install chromium or set LARES_CHROMIUM"),
]


@pytest.fixture(scope="module")
def voila_url(tmp_path_factory):
    with voila(APP, tmp_path_factory.mktemp("voila") / "voila.log") as url:
        yield url


@pytest.fixture
def page(voila_url):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1500, "height": 1000})
        page.set_default_timeout(TIMEOUT_MS)
        page.goto(voila_url, timeout=TIMEOUT_MS)
        page.get_by_placeholder("Tell Lares what to do").wait_for()
        yield page
        browser.close()


def _run(page, instruction: str) -> None:
    box = page.get_by_placeholder("Tell Lares what to do")
    box.fill(instruction)
    box.press("Tab")  # leave the box, so the kernel has the text before the click
    page.get_by_title("Run", exact=True).click()  # the icon's glyph is part of the button's name


def _room(page, room: str):
    return page.locator(f'li.lares-room[data-room="{room}"]').first


def test_dog_search_in_the_page_lights_the_bedroom(page, tmp_path):
    from playwright.sync_api import expect

    # The agent runs in the kernel; on a loaded 2-core machine a search takes seconds, not the default 5.
    expect.set_options(timeout=TIMEOUT_MS)

    expect(_room(page, "bedroom")).to_have_attribute("data-lit", "false")
    _run(page, "turn on the light for my dog")
    expect(page.locator('.lares-status[data-status="done"]')).to_be_visible()
    expect(_room(page, "bedroom")).to_have_attribute("data-lit", "true")
    expect(_room(page, "bedroom")).to_have_text("Bedroom: lit")
    transcript = page.locator("ul.lares-transcript")
    expect(transcript).to_contain_text("Also here: Bruno, a dog (bruno)")
    assert page.locator("li.lares-step").count() >= 10  # intents, moves, looks, lights, the halt
    expect(page.locator(".lares-map-state")).to_contain_text("Bruno (dog) in Bedroom")
    expect(page.get_by_text("tool calls remaining")).to_be_visible()
    page.screenshot(path=str(tmp_path / "app_dog_search.png"), full_page=True)


def test_daytime_question_is_answered_in_the_page(page, tmp_path):
    from playwright.sync_api import expect

    # The agent runs in the kernel; on a loaded 2-core machine a search takes seconds, not the default 5.
    expect.set_options(timeout=TIMEOUT_MS)

    _run(page, "set the office light depending on whether it's daytime")
    question = page.locator(".lares-question")
    expect(question).to_contain_text("daytime")
    page.screenshot(path=str(tmp_path / "app_question.png"), full_page=True)
    page.get_by_placeholder("Your answer").fill("No, it is the middle of the night.")
    page.get_by_title("Answer", exact=True).click()
    expect(page.locator('.lares-status[data-status="done"]')).to_be_visible()
    expect(_room(page, "office")).to_have_attribute("data-lit", "true")
    expect(page.locator("ul.lares-transcript")).to_contain_text("No, it is the middle of the night.")
    expect(question).to_be_hidden()
    page.screenshot(path=str(tmp_path / "app_daytime.png"), full_page=True)
