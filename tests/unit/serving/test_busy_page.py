"""The page under overload, in headless Chromium: "busy, retrying in N s", then the answer.

A slow verifier double with one worker and a queue of one: two requests in flight fill the server,
so the page's request is shed with 503 + Retry-After; the page counts down, retries and renders the
results. Uses the system Chromium (/usr/bin/chromium) through Playwright; never downloads a browser.
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import httpx
import pytest
from serving_doubles import FakeVerifier, serve_in_thread

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"]

pytestmark = pytest.mark.browser


def test_the_page_says_busy_and_retries(tmp_path: Path) -> None:
    if not os.path.exists(CHROMIUM):
        pytest.skip(f"Chromium not installed at {CHROMIUM} (apt-get install chromium)")
    try:
        from playwright.sync_api import expect, sync_playwright
    except ImportError:
        pytest.skip("playwright (python) is not installed")
    from sciverify.serving.app import create_app
    from sciverify.serving.settings import Settings

    settings = Settings(
        data_dir=tmp_path / "serve",
        verify_workers=1,
        verify_queue=1,
        verify_batch=1,
        # (0 would turn the deadline off: then only the FIFO bound sheds, and the page's claim is admitted
        # whenever the worker has already taken the first background claim)
        verify_deadline=0.01,
        cache_size=0,
    )
    app = create_app(settings, verifier=FakeVerifier(delay=3.0))
    with serve_in_thread(app) as port, sync_playwright() as pw:
        url = f"http://127.0.0.1:{port}"
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = browser.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.on(
            "console",
            lambda msg: errors.append(msg.text) if msg.type == "error" and "503" not in msg.text else None,
        )
        page.goto(url + "/")
        page.get_by_label("Claim").fill("ALDH1 predicts prognosis.")
        busy = [
            threading.Thread(
                target=httpx.post,
                args=(url + "/api/verify",),
                kwargs={"json": {"claim": f"b{i}"}, "timeout": 60},
            )
            for i in range(2)
        ]
        for t in busy:
            t.start()
        # press Enter only once the one worker is busy: before the first batch has given an estimate, one
        # claim per worker may wait, and with a deadline of 10 ms every further claim that needs the models
        # is then refused at once (the second background claim is refused too)
        deadline = time.monotonic() + 20
        while True:
            queue = httpx.get(url + "/api/health").json()["queue"]
            if queue["running"] + queue["waiting"] >= 1:
                break
            assert time.monotonic() < deadline, "the background claims never reached the worker"
            time.sleep(0.05)
        page.get_by_label("Claim").press("Enter")
        # (polled from Python: the page's CSP forbids evaluating strings as script)
        expect(page.locator("#status")).to_contain_text("busy, retrying in", timeout=10_000)
        page.wait_for_selector("#results:not([hidden]) article.result", timeout=30_000)
        assert "supporting" in page.locator("#status").inner_text()
        assert page.locator("#error").is_hidden()
        browser.close()
        for t in busy:
            t.join()
    assert errors == [], errors
