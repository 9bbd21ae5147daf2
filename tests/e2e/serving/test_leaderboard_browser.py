"""The leaderboard page in headless Chromium against a real `sciverify serve`: shared ranks, figures on
the grid, a date that does not wrap, sorting and filtering without a build step, the CSV download, and
the final ranking after `sciverify leaderboard close`.

Uses the system Chromium (/usr/bin/chromium) through Playwright; never downloads a browser. The
verifier is not loaded (the page needs none).
"""

from __future__ import annotations

import csv
import io
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from serving_e2e import add_submitter, predictions_for, start_server

ENV = {"SCIVERIFY_PRELOAD_VERIFIER": "false", "SCIVERIFY_N_BOOT": "200"}

pytestmark = pytest.mark.browser


def _upload(url: str, token: str, content: bytes, system: str) -> dict:
    r = httpx.post(
        url + "/api/submissions",
        headers={"Authorization": f"Bearer {token}"},
        files={"file": ("p.jsonl", content)},
        data={"system": system},
        timeout=120,
    )
    assert r.status_code == 201, r.text
    return r.json()


def _column(page, index: int) -> list[str]:
    return page.locator(f"#board tbody tr:not([hidden]) > :nth-child({index})").all_inner_texts()


def test_leaderboard_page_in_the_browser(browser, hidden_gold: Path, tmp_path: Path) -> None:
    data = tmp_path / "serve"
    n = len(hidden_gold.read_text().splitlines())
    teams = {
        name: add_submitter(data, name) for name in ("Team Delta", "team-alpha", "team-bravo", "team-charlie")
    }
    server = start_server(data, args=("--leaderboard-gold", str(hidden_gold)), env=ENV)
    try:
        server.wait_ready(timeout=120, verifier=False)
        url = server.url
        _upload(url, teams["team-alpha"], predictions_for(hidden_gold, keep=n), "perfect")
        _upload(url, teams["team-bravo"], predictions_for(hidden_gold, keep=(2 * n) // 3), "two thirds")
        _upload(
            url, teams["team-charlie"], predictions_for(hidden_gold, keep=(2 * n) // 3), "same two thirds"
        )
        _upload(url, teams["Team Delta"], predictions_for(hidden_gold, keep=n // 2), "half")
        ranks = [e["rank"] for e in httpx.get(url + "/api/leaderboard", timeout=30).json()["entries"]]
        assert ranks == [1, 2, 2, 4]

        page = browser.new_page(viewport={"width": 900, "height": 900}, accept_downloads=True)
        errors: list[str] = []
        external: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.on("request", lambda req: None if req.url.startswith(url) else external.append(req.url))
        page.goto(url + "/leaderboard")
        assert _column(page, 1) == ["1", "2", "2", "4"]
        assert _column(page, 3) == ["team-alpha", "team-bravo", "team-charlie", "Team Delta"]
        assert page.locator("#board tbody tr").first.locator("td.num").nth(1).inner_text() == "1.00"
        assert all(len(x.split(".")[1]) == 2 for x in _column(page, 8)), _column(page, 8)
        # the date stays on one line, even on a narrow window
        page.set_viewport_size({"width": 520, "height": 900})
        date = page.locator("#board tbody td.date").first
        assert date.evaluate("el => getComputedStyle(el).whiteSpace") == "nowrap"
        assert date.locator("time").evaluate("el => el.getClientRects().length") == 1
        page.set_viewport_size({"width": 1280, "height": 900})

        # sort by team (a click, then the keyboard), then by a figure column (best first)
        team_button = page.get_by_role("button", name="Team")
        team_button.click()
        assert _column(page, 3) == sorted(_column(page, 3), key=str.lower)
        assert page.locator("#board thead th").nth(2).get_attribute("aria-sort") == "ascending"
        team_button.focus()
        page.keyboard.press("Enter")
        assert _column(page, 3) == sorted(_column(page, 3), key=str.lower, reverse=True)
        assert page.locator("#board thead th").nth(2).get_attribute("aria-sort") == "descending"
        page.get_by_role("button", name="Sentence: selection + label F1").click()
        figures = [float(x) for x in _column(page, 8)]
        assert figures == sorted(figures, reverse=True)
        page.get_by_role("button", name="Rank").click()
        assert _column(page, 1) == ["1", "2", "2", "4"]

        # filter by team or system
        page.get_by_label("Filter by team or system").fill("two thirds")
        assert _column(page, 3) == ["team-bravo", "team-charlie"]
        assert page.locator("#board-count").inner_text() == "2 of 4 shown"
        page.get_by_label("Filter by team or system").fill("delta")
        assert _column(page, 3) == ["Team Delta"]
        page.get_by_label("Filter by team or system").fill("nobody at all")
        assert _column(page, 3) == [] and page.locator("#board-empty").is_visible()
        page.get_by_label("Filter by team or system").fill("")
        assert len(_column(page, 3)) == 4

        # the CSV download is the board
        with page.expect_download() as info:
            page.get_by_role("link", name="CSV").click()
        rows = list(csv.DictReader(io.StringIO(Path(info.value.path()).read_text(encoding="utf-8"))))
        assert [(r["rank"], r["team"]) for r in rows] == [
            ("1", "team-alpha"),
            ("2", "team-bravo"),
            ("2", "team-charlie"),
            ("4", "Team Delta"),
        ]
        page.screenshot(path=str(tmp_path / "leaderboard.png"), full_page=True)

        # the operator closes the phase: the page links the final ranking on the private claims
        closed = subprocess.run(
            [sys.executable, "-m", "sciverify", "leaderboard", "close", "--data-dir", str(data)],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert closed.returncode == 0, closed.stderr
        page.goto(url + "/leaderboard")
        page.get_by_role("link", name="The final ranking on the private claims").click()
        page.wait_for_selector("#final")
        final_teams = page.locator("#final tbody th").all_inner_texts()
        assert len(final_teams) == 4 and final_teams[0] == "perfect"
        assert errors == [], errors
        assert external == [], f"the page must work offline; it requested {external}"
        page.close()
    finally:
        server.stop()
