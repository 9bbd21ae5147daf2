"""The screenshots in the docs: a supported, a refuted and a disputed claim on the page, from a real server.

Starts ``sciverify serve`` (the shipped models, the default SciFact index) on a free loopback port, opens the
page for each claim in headless Chromium (/usr/bin/chromium, through Playwright; no browser is downloaded)
and writes, 1280 px wide and cut at :data:`MAX_HEIGHT` px, ``docs/screenshot.png`` (the disputed claim, also
the README's), ``docs/view-supported.png`` and ``docs/view-refuted.png``; and ``docs/view-phone.png``, the
disputed claim on a phone's first screen (390 x 844) as it opens, nothing clicked or scrolled. Each is, when
Debian's ``pngquant`` is installed, reduced to a 256-colour palette so the docs stay small:

    .venv/bin/python scripts/screenshots.py
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
#: Screenshots stop here (px): the verdict and the first papers of each side.
MAX_HEIGHT = 1500
#: A phone's first screen (CSS px), what tests/e2e/serving/test_phone_browser.py checks.
PHONE = (390, 844)
#: (file, claim, width, height): the page is that wide and the picture that tall at most.
SHOTS = (
    ("screenshot.png", "A deficiency of folate increases blood levels of homocysteine.", 1280, MAX_HEIGHT),
    ("view-supported.png", "Aspirin reduces the risk of colorectal cancer.", 1280, MAX_HEIGHT),
    ("view-refuted.png", "Antidepressants increase the severity of migraines.", 1280, MAX_HEIGHT),
    ("view-phone.png", "A deficiency of folate increases blood levels of homocysteine.", *PHONE),
)


def _shrink(path: Path) -> None:
    """256 colours with pngquant when it is installed (about a quarter of the size for text)."""
    if shutil.which("pngquant"):
        subprocess.run(["pngquant", "--force", "--skip-if-larger", "--quality", "60-90", "--output",
                        str(path), str(path)], check=False)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def main() -> None:
    from playwright.sync_api import sync_playwright

    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    data = Path(tempfile.mkdtemp(prefix="sciverify-shots-"))
    log = open(data / "server.log", "wb")  # noqa: SIM115 - open for the server's lifetime
    server = subprocess.Popen(
        [sys.executable, "-m", "sciverify", "serve", "--host", "127.0.0.1", "--port", str(port),
         "--data-dir", str(data)],
        stdout=log, stderr=subprocess.STDOUT, env=os.environ.copy(),
    )
    try:
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline:
            if server.poll() is not None:
                raise SystemExit(f"the server exited; see {data / 'server.log'}")
            try:
                if httpx.get(url + "/api/health", timeout=5).json().get("verifier") == "ready":
                    break
            except httpx.HTTPError:
                pass
            time.sleep(1)
        else:
            raise SystemExit("the server did not get ready in 10 minutes")
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--headless", "--no-sandbox"])
            for name, claim, width, cut in SHOTS:
                page = browser.new_page(viewport={"width": width, "height": min(cut, 900)})
                page.emulate_media(reduced_motion="reduce")
                page.goto(url + "/")
                page.get_by_label("Claim").fill(claim)
                page.get_by_label("Claim").press("Enter")  # through the page's script, as a person would
                page.wait_for_selector("#results:not([hidden]):not([aria-busy])", timeout=300_000)
                out = ROOT / "docs" / name
                page.evaluate("document.activeElement && document.activeElement.blur()")
                height = min(cut, page.evaluate("document.documentElement.scrollHeight"))
                page.screenshot(path=str(out), full_page=True, clip={"x": 0, "y": 0, "width": width,
                                                                     "height": height})
                _shrink(out)
                print(f"{out.relative_to(ROOT)}: {out.stat().st_size // 1024} KiB, {claim!r}")
                page.close()
            browser.close()
    finally:
        server.terminate()
        server.wait(timeout=60)
        log.close()


if __name__ == "__main__":
    main()
