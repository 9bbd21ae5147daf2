"""/docs in headless Chromium: Swagger UI 5 renders the OpenAPI 3.1 schema into operation blocks, offline.

A status 200 is not enough: Swagger UI 4 answers 200 and then shows "Unable to render this definition"
for FastAPI's 3.1 schema. This test reads what a person sees. The verifier is not loaded (the page needs
none). Uses the system Chromium (/usr/bin/chromium) through Playwright; never downloads a browser.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from serving_e2e import start_server

pytestmark = pytest.mark.browser


def test_docs_render_the_operations(browser, tmp_path: Path) -> None:
    from sciverify.serving.app import SWAGGER_UI_DIR

    if not (SWAGGER_UI_DIR / "swagger-ui-bundle.js").is_file():
        pytest.skip(f"Swagger UI is not installed in {SWAGGER_UI_DIR}: run ./scripts/setup-swagger-ui")
    server = start_server(tmp_path / "serve", env={"SCIVERIFY_PRELOAD_VERIFIER": "false"})
    try:
        server.wait_ready(timeout=120, verifier=False)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        errors: list[str] = []
        external: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.on("request", lambda req: None if req.url.startswith(server.url) else external.append(req.url))
        page.goto(server.url + "/docs")
        page.wait_for_selector(".opblock", timeout=60_000)
        text = page.locator("body").inner_text()
        assert "Unable to render this definition" not in text
        assert "OAS 3.1" in text, "the schema's version is shown, so it was read"
        summaries = page.locator(".opblock .opblock-summary-path").all_inner_texts()
        paths = {s.replace("\u200b", "").strip() for s in summaries}
        assert {"/api/verify", "/api/predict", "/api/health"} <= paths, paths
        # an operation opens and shows its request body schema
        page.locator(".opblock-post", has_text="/api/verify").first.locator(".opblock-summary").click()
        page.wait_for_selector(".opblock.is-open .opblock-section-request-body", timeout=30_000)
        assert "claim" in page.locator(".opblock.is-open").inner_text()
        assert errors == [], errors
        assert external == [], f"the docs must work offline; they requested {external}"
        page.close()
    finally:
        server.stop()
