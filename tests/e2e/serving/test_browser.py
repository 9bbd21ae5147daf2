"""The fact-checking page in headless Chromium against the real server (real models).

Uses the system Chromium (/usr/bin/chromium) through Playwright; never downloads a browser.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

CLAIM = "ALDH1 expression is associated with poorer prognosis for breast cancer primary tumors."
SECOND = "Antidepressants increase the severity of migraines."

pytestmark = pytest.mark.browser


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
    # before any query: no empty result boxes, no verdict, no export links
    for hidden in ("#results", "#support-heading", "#contradict-heading", "#verdict", "#export-csv"):
        assert not page.locator(hidden).is_visible(), hidden

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
    assert first.locator("meter").count() == 2, "P(evidence) and P(right side | evidence)"
    assert "Chance it is evidence" in first.inner_text() and "Chance its side is right" in first.inner_text()
    assert first.locator("p.why").inner_text().startswith("Supports the claim")
    assert first.locator("details.rest").count() == 1, "the rest of the abstract is folded"
    assert not first.locator("details.rest p.abstract-text").is_visible()
    assert page.locator("#numbers-help").is_visible()
    assert page.locator("#verdict").inner_text() in ("supported", "conflicting")
    assert "weight" in page.locator("#verdict-why").inner_text()
    assert page.locator("#searched").inner_text().startswith("Searched 5,183 abstracts of the SciFact corpus")
    assert first.locator("a.paper-link").get_attribute("href").startswith("https://api.semanticscholar.org/CorpusID:")
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
    expect(page).to_have_title(re.compile(r"^Antidepressants increase"), timeout=120_000)
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


def test_a_disputed_claim_shows_both_sides_and_exports(browser, real_server, tmp_path: Path) -> None:
    """The example the literature disputes: both columns fill, the verdict says so, and the exports
    download the same result as JSON and as a citation list."""
    from playwright.sync_api import expect

    from sciverify.serving.routes_pages import EXAMPLE_CLAIMS

    page = browser.new_page(viewport={"width": 1280, "height": 900}, accept_downloads=True)
    page.goto(real_server.url + "/")
    disputed = "A deficiency of folate increases blood levels of homocysteine."
    assert disputed in EXAMPLE_CLAIMS
    page.locator("a.example", has_text="folate").click()
    page.wait_for_selector("#results:not([hidden]) article.result", timeout=120_000)
    expect(page.locator("#verdict")).to_have_text("conflicting")
    assert page.locator("#support-list article.result").count() >= 1
    assert page.locator("#contradict-list article.result").count() >= 1
    assert page.locator("#contradict-list mark").count() >= 1, "the refuting paper shows its sentences"
    assert "neither side weighs 2 times the other" in page.locator("#verdict-why").inner_text()
    with page.expect_download() as info:
        page.locator("#export-csv").click()
    name = info.value.suggested_filename
    assert re.fullmatch(r"sciverify-a-deficiency-of-folate-.*-\d{8}-\d{6}Z\.csv", name), name
    rows = info.value.path().read_text().splitlines()
    assert rows[0].startswith("claim,verdict,side,rank,p_evidence,p_label_correct") and len(rows) >= 3
    assert rows[1].startswith(disputed + ",conflicting,supporting,1,")
    with page.expect_download() as info:
        page.locator("#export-json").click()
    body = json.loads(info.value.path().read_text())
    assert body["claim"] == disputed and body["verdict"] == "conflicting"
    page.close()


def test_at_phone_width_both_sides_are_reachable_from_the_top(browser, real_server, tmp_path: Path) -> None:
    """At 390 px the columns stack; the side links at the top show either side without scrolling past the
    other, the abstracts are folded, and the study badges and the verdict's why are on the page
    (test_phone_browser.py holds what the first screen shows)."""
    from playwright.sync_api import expect

    page = browser.new_page(viewport={"width": 390, "height": 844})
    page.goto(real_server.url + "/")
    page.locator("a.example", has_text="folate").click()
    # one side is open at a time: the first card of the list is hidden when the other side is open
    page.wait_for_selector("#results:not([hidden]) article.result >> visible=true", timeout=120_000)
    expect(page.locator("#verdict")).to_have_text("conflicting")
    refuting = page.locator("#show-contradict")
    assert refuting.is_visible() and refuting.bounding_box()["y"] < 2 * 844, "the side links sit near the top"
    assert page.locator("ul.badges li").count() >= 1, "study badges"
    refuting.click()
    heading = page.locator("#contradict-heading")
    expect(heading).to_be_in_viewport()
    assert not page.locator("#support-list").is_visible(), "the other side is out of the way"
    assert page.locator("#contradict-list article.result").first.is_visible()
    assert page.evaluate("window.scrollY") < 2500, "no supporting abstract was scrolled past"
    page.locator("#show-support").click()
    expect(page.locator("#support-heading")).to_be_in_viewport()
    assert not page.locator("#contradict-list").is_visible()
    height = page.evaluate("document.documentElement.scrollHeight")
    assert height < 4000, f"the folded page is {height} px tall at 390 px"
    # the fold opens
    card = page.locator("#support-list article.result").first
    card.locator("details.rest summary").click()
    assert card.locator("details.rest p.abstract-text").is_visible()
    page.screenshot(path=str(tmp_path / "phone.png"), full_page=True)
    page.close()


def test_on_a_phone_the_claim_wraps_whole_and_the_verdict_is_above_the_fold(browser, real_server) -> None:
    """At 390 x 844 the claim box is a text area that grows to show the whole claim (no inner scrolling,
    nothing cut off), Enter still verifies, and after a verify the verdict and its why are on the first
    screen without scrolling."""
    page = browser.new_page(viewport={"width": 390, "height": 844})
    page.goto(real_server.url + "/")
    box = page.get_by_label("Claim")
    assert box.evaluate("el => el.tagName") == "TEXTAREA"
    box.fill("x")
    one_line = box.bounding_box()["height"]
    box.fill(CLAIM)
    grown = box.bounding_box()["height"]
    assert grown > 1.5 * one_line, (one_line, grown)
    assert box.evaluate("el => el.scrollHeight <= el.clientHeight + 1"), "the whole claim shows"
    box.press("Enter")
    # one side is open at a time: the first card of the list is hidden when the other side is open
    page.wait_for_selector("#results:not([hidden]) article.result >> visible=true", timeout=120_000)
    assert box.input_value() == CLAIM, "Enter verified instead of adding a line"
    assert page.evaluate("window.scrollY") == 0
    for shown in ("#claim", "#verdict", "#verdict-why"):
        where = page.locator(shown).bounding_box()
        assert where is not None and where["y"] + where["height"] <= 844, (shown, where)
    assert page.locator("#verdict").inner_text() in ("supported", "conflicting")
    page.close()
