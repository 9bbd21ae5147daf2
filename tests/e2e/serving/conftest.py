"""Fixtures for the serving end-to-end tests: real `sciverify serve` subprocesses on loopback ports.

The shared server runs the real Verifier on the real default SciFact index; tests that need it are
skipped (with the reason) when that index has not been built on this machine.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from serving_e2e import ServerProcess, default_index_ready, start_server

#: The system Chromium, driven through Playwright; a browser is never downloaded.
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Headless Chromium for the page tests; skipped (with the reason) where it or Playwright is missing."""
    if not os.path.exists(CHROMIUM):
        pytest.skip(f"Chromium not installed at {CHROMIUM} (apt-get install chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("playwright (python) is not installed")
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture(scope="session")
def scifact_root() -> Path:
    from sciverify.data.datasets import resolve_data_dir

    try:
        root = resolve_data_dir(None).root
    except Exception as exc:  # pragma: no cover - depends on the machine
        pytest.skip(f"SciFact data not available: {exc}")
    return root


@pytest.fixture(scope="session")
def hidden_gold(scifact_root: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The fixed validation split of claims_train.jsonl, used as the leaderboard's hidden gold."""
    from sciverify.data.io import read_claims
    from sciverify.data.splits import split_claims

    ids = {c.id for c in split_claims(read_claims(scifact_root / "claims_train.jsonl")).validation}
    out = tmp_path_factory.mktemp("gold") / "hidden_gold.jsonl"
    lines = (scifact_root / "claims_train.jsonl").read_text(encoding="utf-8").splitlines()
    out.write_text("".join(x + "\n" for x in lines if json.loads(x)["id"] in ids), encoding="utf-8")
    return out


@pytest.fixture(autouse=True)
def _unspent_gold(request: pytest.FixtureRequest) -> Iterator[None]:
    """The shared gold starts every test unspent: a test that closes a phase writes the spent record
    beside it (``serving.spent``), as the server does for an operator."""
    yield
    if "hidden_gold" in request.fixturenames:
        from sciverify.serving.spent import spent_path

        spent_path(request.getfixturevalue("hidden_gold")).unlink(missing_ok=True)


@pytest.fixture(scope="session")
def real_server(tmp_path_factory: pytest.TempPathFactory, hidden_gold: Path) -> Iterator[ServerProcess]:
    """One real server (real verifier, real default index, SQLite) for the whole session."""
    reason = default_index_ready()
    if reason:
        pytest.skip(reason)
    server = start_server(
        tmp_path_factory.mktemp("serve"),
        args=("--leaderboard-gold", str(hidden_gold)),
        # a development phase (public gold): the tests read exact scores and intervals
        env={
            "SCIVERIFY_N_BOOT": "1000",
            "SCIVERIFY_GOLD_PUBLIC": "true",
            "SCIVERIFY_SUBMISSIONS_PER_DAY": "100",
        },
    )
    try:
        try:
            server.wait_ready(timeout=600)
        except RuntimeError:
            missing = [x for x in server.log.read_text().splitlines() if "ArtifactError" in x]
            if missing:  # a model or index artifact is not on this machine: not a serving failure
                pytest.skip(f"the real verifier cannot load here: {missing[-1].strip()}")
            raise
        yield server
    finally:
        server.stop()
