"""The fact-checking page in headless Chromium against the real server (real models).

Uses the system Chromium (/usr/bin/chromium) through Playwright; never downloads a browser.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
CLAIM = "ALDH1 expression is associated with poorer prognosis for breast cancer primary tumors."
SECOND = "ATM and Rad3 related protein have no role in sensing DNA damage."

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def browser():
    if not os.path.exists(CHROMIUM):
        pytest.skip(f"Chromium not installed at {CHROMIUM} (apt-get install chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("playwright (python) is not installed")
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()


def test_check_a_claim_in_the_browser(browser, real_server, tmp_path: Path) -> None:
    from playwright.sync_api import expect

    page = browser.new_page(viewport={"width": 1280, "height": 900})
    external: list[str] = []
    page.on(
        "request",
        lambda req: (
            external.append(req.url)
            if not req.url.startswith(real_server.url) and not req.url.startswith("data:")
            else None
        ),
    )
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(real_server.url + "/")
    assert page.get_by_label("Claim").is_visible()

    # Keyboard: type into the labelled field and press Enter.
    page.get_by_label("Claim").fill(CLAIM)
    page.get_by_label("Claim").press("Enter")
    page.wait_for_selector("#results:not([hidden]) article.result", timeout=120_000)
    status = page.locator("#status").inner_text()
    assert "supporting" in status and "refuting" in status
    cards = page.locator("article.result")
    assert cards.count() >= 1
    first = cards.first
    assert first.locator("mark").count() >= 1, "rationale sentences are highlighted in the abstract"
    assert first.locator("meter").count() == 1
    assert page.locator("#support-heading").is_visible() and page.locator("#contradict-heading").is_visible()
    assert "claim=" in page.url
    page.screenshot(path=str(tmp_path / "results.png"), full_page=True)
    assert (tmp_path / "results.png").stat().st_size > 10_000

    # Keyboard again: Tab from the field to the button (focus is visible) and press Space.
    page.get_by_label("Claim").fill(SECOND)
    page.get_by_label("Claim").focus()
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.id") == "submit"
    outline = page.evaluate("getComputedStyle(document.activeElement).outlineStyle")
    assert outline not in ("none", ""), "keyboard focus must be visible"
    page.keyboard.press("Space")
    expect(page).to_have_title(re.compile(r"^ATM and Rad3"), timeout=120_000)
    page.wait_for_selector("#submit:not([disabled])", timeout=120_000)
    page.screenshot(path=str(tmp_path / "second.png"), full_page=True)

    # The abstract link opens the abstract page with the rationale highlighted.
    link = page.locator("article.result h4 a").first
    if link.count():
        link.click()
        page.wait_for_selector("ol.sentences")
        assert page.locator("ol.sentences mark").count() >= 1

    # An empty claim gets a clear message, without a request.
    page.goto(real_server.url + "/")
    page.get_by_label("Claim").fill("   ")
    page.evaluate("document.getElementById('claim').removeAttribute('required')")
    page.get_by_label("Claim").press("Enter")
    assert page.locator("#error").inner_text() == "Type a claim to verify."

    assert errors == [], errors
    assert external == [], f"the page must work offline; it requested {external}"
    page.close()
