"""Fixtures for the serving unit tests: a small verifier double, a gold file, an app per test.

The double answers instantly so the HTTP limits, queueing and storage can be tested precisely; the
e2e tests run the real verifier.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from serving_doubles import FakeVerifier


@pytest.fixture(scope="session")
def scifact_dir() -> Path:
    from sciverify.data.datasets import resolve_data_dir

    try:
        root = resolve_data_dir(None).root
    except Exception as exc:  # pragma: no cover - depends on the machine
        pytest.skip(f"SciFact data not available: {exc}")
    if not (root / "corpus.jsonl").is_file():
        pytest.skip(f"SciFact corpus not found in {root}")
    return root


@pytest.fixture(scope="session")
def gold_file(scifact_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The fixed validation split (181 claims of claims_train.jsonl) as a hidden gold file."""
    from sciverify.data.io import read_claims
    from sciverify.data.splits import split_claims

    ids = {c.id for c in split_claims(read_claims(scifact_dir / "claims_train.jsonl")).validation}
    out = tmp_path_factory.mktemp("gold") / "hidden_gold.jsonl"
    with (
        open(scifact_dir / "claims_train.jsonl", encoding="utf-8") as src,
        open(out, "w", encoding="utf-8") as dst,
    ):
        for line in src:
            if json.loads(line)["id"] in ids:
                dst.write(line)
    return out


@pytest.fixture(autouse=True)
def _unspent_gold(request: pytest.FixtureRequest) -> Iterator[None]:
    """The shared gold file starts every test unspent. A test that closes a phase writes the spent record
    beside the gold, as the server does for an operator (``serving.spent``); the next test is a new
    operator with the same file, not a later phase of the same competition."""
    yield
    if "gold_file" in request.fixturenames:
        from sciverify.serving.spent import spent_path

        spent_path(request.getfixturevalue("gold_file")).unlink(missing_ok=True)


@pytest.fixture
def make_client(tmp_path: Path, scifact_dir: Path, gold_file: Path) -> Iterator[object]:
    """Factory: ``make_client(verifier=..., board=False, **settings)`` -> a started TestClient."""
    from sciverify.serving.app import create_app
    from sciverify.serving.settings import Settings

    clients: list[TestClient] = []

    def make(verifier: object | None = None, board: bool = False, **overrides: object) -> TestClient:
        values: dict[str, object] = {
            "data_dir": tmp_path / "serve",
            "leaderboard_gold": gold_file if board else None,
            "corpus": scifact_dir / "corpus.jsonl",
            "n_boot": 500,
        }
        values.update(overrides)
        app = create_app(Settings(**values), verifier=verifier or FakeVerifier())  # type: ignore[arg-type]
        client = TestClient(app, raise_server_exceptions=False)
        client.__enter__()
        clients.append(client)
        return client

    yield make
    for client in clients:
        client.__exit__(None, None, None)
