"""Test doubles and file builders for the serving unit tests (imported by conftest and tests)."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from sciverify.data.records import Abstract, Label, RationaleSentence, StudyFacts, VerifiedAbstract
from sciverify.pipeline.searched import Searched

__all__ = ["ABSTRACTS", "FakeVerifier", "empty_lines", "oracle_lines", "serve_in_thread"]

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

    default_k = 5
    #: What the real Verifier says it searched (sciverify.pipeline.searched).
    searched = Searched("SciFact", 5183)

    def verify_batch(self, claims: Sequence[str], k: int | None = None) -> list[list[VerifiedAbstract]]:
        k = self.default_k if k is None else k
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
                        p_evidence=0.9,
                        p_label_correct=0.8,
                        in_prediction=True,
                        link="https://api.semanticscholar.org/CorpusID:11",
                        study=StudyFacts("cohort", "human", 500),
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
                        p_evidence=0.7,
                        p_label_correct=0.6,
                        in_prediction=False,  # shown as evidence, not in the leaderboard decision
                    ),
                ][: max(0, k)]
            )
        return out

    def get_abstract(self, doc_id: str) -> Abstract | None:
        return ABSTRACTS.get(doc_id)


def oracle_lines(gold: Path) -> bytes:
    """A perfect submission built from the gold (what a system with gold rationales would send)."""
    from sciverify.data.io import prediction_to_json, read_claims
    from sciverify.scoring import oracle_predictions

    preds = oracle_predictions(read_claims(gold))
    return b"".join(json.dumps(prediction_to_json(p)).encode() + b"\n" for p in preds)


def heavy_lines(gold: Path, corpus: Path, size: int) -> bytes:
    """A valid submission of about ``size`` bytes: the gold's own evidence plus, for every claim, as
    many other abstracts of the corpus (labelled SUPPORT on their first sentence) as fill it. What a
    system predicting far too much evidence would send; slow to score because every entry counts."""
    from sciverify.data.io import prediction_to_json, read_claims
    from sciverify.scoring import oracle_predictions

    doc_ids = [json.loads(line)["doc_id"] for line in corpus.read_text(encoding="utf-8").splitlines()]
    rows = [prediction_to_json(p) for p in oracle_predictions(read_claims(gold))]
    per_claim = max(1, size // (len(rows) * len(', "12345678": {"label": "SUPPORT", "sentences": [0]}')))
    for i, row in enumerate(rows):
        for doc in doc_ids[i * 7 % len(doc_ids) :][:per_claim]:
            row["evidence"].setdefault(str(doc), {"label": "SUPPORT", "sentences": [0]})
    return b"".join(json.dumps(r).encode() + b"\n" for r in rows)


def empty_lines(gold: Path) -> bytes:
    """A valid submission that predicts nothing for every claim."""
    from sciverify.data.io import read_claims

    return b"".join(json.dumps({"id": c.id, "evidence": {}}).encode() + b"\n" for c in read_claims(gold))


@contextmanager
def serve_in_thread(app: object) -> Iterator[int]:
    """Run ``app`` under the uvicorn configuration of ``sciverify serve`` on a free loopback port."""
    import uvicorn

    from sciverify.serving.server import uvicorn_config

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = int(sock.getsockname()[1])
    server = uvicorn.Server(uvicorn_config(app, "127.0.0.1", port))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.05)
    if not server.started:
        raise RuntimeError("the server did not start")
    try:
        yield port
    finally:
        server.should_exit = True
        thread.join(timeout=30)


@contextmanager
def serve_with_access_log(app: object) -> Iterator[tuple[int, list[str]]]:
    """:func:`serve_in_thread`, with every access-log line the server writes collected as it writes it."""
    import logging

    lines: list[str] = []

    class Capture(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            lines.append(self.format(record))

    handler = Capture()
    with serve_in_thread(app) as port:  # uvicorn (re)configures logging first: attach after it
        logging.getLogger("uvicorn.access").addHandler(handler)
        try:
            yield port, lines
        finally:
            logging.getLogger("uvicorn.access").removeHandler(handler)
