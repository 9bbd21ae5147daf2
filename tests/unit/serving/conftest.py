"""Fixtures for the serving unit tests: a small verifier double, a gold file, an app per test.

The double answers instantly so the HTTP limits, queueing and storage can be tested precisely; the
e2e tests run the real verifier.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from sciverify.data.records import Abstract, Label, RationaleSentence, VerifiedAbstract

ABSTRACTS = {
    "11": Abstract(
        11,
        "ALDH1 and breast cancer outcome",
        ("ALDH1 marks stem cells.", "High ALDH1 predicts poor prognosis.", "Cohort of 500 women."),
    ),
    "12": Abstract(
        12, "A null result on ALDH1", ("We studied ALDH1.", "ALDH1 was not associated with survival.")
    ),
}


class FakeVerifier:
    """Deterministic stand-in for ``sciverify.pipeline.verify.Verifier``."""

    def __init__(self, delay: float = 0.0, fail_on: str | None = None) -> None:
        self.delay = delay
        self.fail_on = fail_on
        self.batches: list[list[str]] = []
        self.lock = threading.Lock()

    def verify_batch(self, claims: Sequence[str], k: int = 10) -> list[list[VerifiedAbstract]]:
        with self.lock:
            self.batches.append(list(claims))
        if self.delay:
            time.sleep(self.delay)
        if self.fail_on is not None and any(self.fail_on in c for c in claims):
            raise RuntimeError(f"model exploded on {self.fail_on} /secret/path/model.onnx")
        out = []
        for _ in claims:
            out.append(
                [
                    VerifiedAbstract(
                        11,
                        ABSTRACTS["11"].title,
                        Label.SUPPORT,
                        0.9,
                        (RationaleSentence(1, ABSTRACTS["11"].sentences[1], 0.95),),
                        12.0,
                    ),
                    VerifiedAbstract(
                        12,
                        ABSTRACTS["12"].title,
                        Label.CONTRADICT,
                        0.7,
                        (
                            RationaleSentence(1, ABSTRACTS["12"].sentences[1], 0.8),
                            RationaleSentence(0, ABSTRACTS["12"].sentences[0], 0.4),
                        ),
                        9.0,
                    ),
                ][: max(0, k)]
            )
        return out

    def get_abstract(self, doc_id: str) -> Abstract | None:
        return ABSTRACTS.get(doc_id)


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


def oracle_lines(gold: Path) -> bytes:
    """A perfect submission built from the gold (what a system with gold rationales would send)."""
    from sciverify.data.io import prediction_to_json, read_claims
    from sciverify.scoring import oracle_predictions

    preds = oracle_predictions(read_claims(gold))
    return b"".join(json.dumps(prediction_to_json(p)).encode() + b"\n" for p in preds)


def empty_lines(gold: Path) -> bytes:
    """A valid submission that predicts nothing for every claim."""
    from sciverify.data.io import read_claims

    return b"".join(json.dumps({"id": c.id, "evidence": {}}).encode() + b"\n" for c in read_claims(gold))


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
