"""The real pipeline end to end: default SciFact index, shipped models, real claims, real CLI."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from sciverify.data.records import Label
from sciverify.errors import ArtifactError, InputError

CLAIM_52 = "ALDH1 expression is associated with poorer prognosis for breast cancer primary tumors."
GOLD_DOC_52 = 45638119  # claims_train.jsonl, claim 52: SUPPORT, rationale sentence 4


@pytest.fixture(scope="module")
def verifier():
    from sciverify.pipeline.verify import load_verifier

    return load_verifier()


def test_known_claim_finds_its_gold_abstract(verifier) -> None:
    results = verifier.verify(CLAIM_52, k=10)
    by_doc = {r.doc_id: r for r in results}
    assert GOLD_DOC_52 in by_doc, [r.doc_id for r in results]
    hit = by_doc[GOLD_DOC_52]
    assert hit.label is Label.SUPPORT
    assert 0.0 < hit.confidence <= 1.0 and hit.p_evidence == hit.confidence
    assert hit.p_label_correct is not None and 0.5 < hit.p_label_correct <= 1.0
    assert hit.link == f"https://api.semanticscholar.org/CorpusID:{GOLD_DOC_52}"
    assert 4 in [s.index for s in hit.rationale]
    abstract = verifier.get_abstract(str(GOLD_DOC_52))
    assert abstract is not None and hit.rationale[0].text == abstract.sentences[hit.rationale[0].index]
    scores = [s.score for s in hit.rationale]
    assert scores == sorted(scores, reverse=True)  # most confident first
    # supporting first, then refuting, each by P(evidence); every one shown clears the display rule
    sides = [r.label is Label.SUPPORT for r in results]
    assert sides == sorted(sides, reverse=True)
    for side in (Label.SUPPORT, Label.CONTRADICT):
        group = [r.p_evidence for r in results if r.label is side]
        assert group == sorted(group, reverse=True)
    from sciverify.pipeline.evidence import SHOW_THRESHOLD

    shown = [r for r in results if r.label is not Label.NOT_ENOUGH_INFO]
    assert all(r.p_evidence is not None and r.p_evidence >= SHOW_THRESHOLD for r in shown)
    # after the sides, the best few below the threshold, listed apart: no side, no sentence, not predicted
    related = results[len(shown) :]
    assert related and all(r.label is Label.NOT_ENOUGH_INFO and r.rationale == () for r in related)
    assert all(r.p_evidence is not None and r.p_evidence < SHOW_THRESHOLD for r in related)
    assert not any(r.in_prediction for r in related)


def test_batch_agrees_with_single(verifier) -> None:
    # int8 ONNX quantises activations per batch, so batched scores differ in the last digits only
    other = "Vitamin D supplementation reduces the risk of fractures in older adults."
    batch = verifier.verify_batch([CLAIM_52, other], k=10)
    for claim, got in zip([CLAIM_52, other], batch, strict=True):
        single = verifier.verify(claim, k=10)
        assert [(r.doc_id, r.label) for r in got] == [(r.doc_id, r.label) for r in single]
        for a, b in zip(got, single, strict=True):
            assert a.confidence == pytest.approx(b.confidence, abs=0.03)


def test_verify_judges_what_predict_judges_by_default(verifier) -> None:
    # the emit model was fitted on the tuned number of candidates: verify must use it unless told otherwise
    from sciverify.data.records import Claim

    claims = [CLAIM_52, "Vitamin D supplementation reduces the risk of fractures in older adults."]
    assert verifier.default_k == verifier.config.retrieval.k
    predicted = verifier.predict([Claim(i, text) for i, text in enumerate(claims)])
    for text, pred in zip(claims, predicted, strict=True):
        shown = verifier.verify(text)
        picked = [r for r in shown if r.in_prediction]
        # the card shows what its label was read from; the prediction lists the leaderboard's sentences
        got = {str(r.doc_id): (r.label, r.listed or tuple(s.index for s in r.rationale)) for r in picked}
        assert got == {key: (ap.label, tuple(ap.sentences)) for key, ap in pred.evidence.items()}
        # the evidence view holds the leaderboard decision and may show more
        assert {str(r.doc_id) for r in shown} >= set(pred.evidence)
        for ap in pred.evidence.values():
            assert ap.p_label_correct is not None and 0.0 <= ap.p_label_correct <= 1.0


def test_reranking_reorders_the_retrieved_depth_by_the_best_sentence(verifier) -> None:
    from dataclasses import replace

    from sciverify.pipeline.verify import Verifier
    from sciverify.retrieval.rerank import RerankConfig

    cfg = replace(verifier.config, rerank=RerankConfig(method="sentence", depth=20, weight=1.0))
    v = verifier
    reranked = Verifier(v.index, v.retriever, v.embed, v.selector, v.labeler, cfg, v.emit, reader=v.reader)
    texts = [CLAIM_52, "Vitamin D supplementation reduces the risk of fractures in older adults."]
    deep, embs = verifier.candidates(texts, 20)
    kept, _ = reranked.candidates(texts, 5)
    cheap = verifier.selector
    for n, text in enumerate(texts):
        assert len(kept[n]) == 5 and {h.row for h in kept[n]} <= {h.row for h in deep[n]}
        scores = cheap.score(text, embs[n], [verifier.abstract_input(h.row) for h in deep[n]])
        best = {h.row: float(s.max()) for h, s in zip(deep[n], scores, strict=True)}
        # weight 1: the five abstracts whose best sentence the trees like most, best first
        assert [best[h.row] for h in kept[n]] == sorted(best.values(), reverse=True)[:5]
    assert GOLD_DOC_52 in [r.doc_id for r in reranked.verify(CLAIM_52)]


def test_bad_input(verifier) -> None:
    with pytest.raises(InputError, match="claim is empty"):
        verifier.verify("   ")
    with pytest.raises(InputError, match="the limit is 1000"):  # the limit the server has too
        verifier.verify("word " * 2000)
    with pytest.raises(InputError, match="k must be at least 1"):
        verifier.verify(CLAIM_52, k=0)
    # within the limit but far longer than the 128-token windows: runs (models truncate), no crash
    assert isinstance(verifier.verify(CLAIM_52 + " " + "and more detail" * 50), list)
    # non-English: runs; the corpus is English, so at most weak evidence comes back, each paper on a side
    # or listed apart as related (no rationale)
    for result in verifier.verify("Die Expression von ALDH1 ist mit einer schlechteren Prognose verbunden."):
        assert result.label in (Label.SUPPORT, Label.CONTRADICT) or result.rationale == ()
    assert verifier.get_abstract("no-such-doc") is None


def test_index_from_another_version_is_refused(tmp_path: Path) -> None:
    from sciverify.pipeline.verify import Verifier
    from sciverify.retrieval.index import default_index_dir

    src = default_index_dir() / "manifest.json"
    manifest = json.loads(src.read_text())
    manifest["format_version"] = 999
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(ArtifactError, match="format version 999"):
        Verifier.load(tmp_path)


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sciverify", *args], capture_output=True, text=True, timeout=600
    )


def test_predict_cli_writes_leaderboard_jsonl(tmp_path: Path, scifact) -> None:
    lines = scifact.train.read_text().splitlines()[:5]
    claims = tmp_path / "claims.jsonl"
    claims.write_text("\n".join(lines) + "\n")
    out = tmp_path / "pred.jsonl"
    proc = _run("predict", str(claims), "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    preds = [json.loads(x) for x in out.read_text().splitlines()]
    assert [p["id"] for p in preds] == [json.loads(x)["id"] for x in lines]
    from sciverify.data.io import read_claims, read_predictions
    from sciverify.scoring import score

    parsed = read_predictions(out)  # strict leaderboard reader
    for p in parsed:
        for entry in p.evidence.values():
            assert entry.label in (Label.SUPPORT, Label.CONTRADICT) and entry.confidence is not None
    ids = {p.id for p in parsed}
    report = score([c for c in read_claims(scifact.train) if c.id in ids], parsed)
    assert set(report.aggregate) >= {"abstract_rationalized", "sentence_label"}


def test_predict_cli_oracle_needs_gold(tmp_path: Path, scifact) -> None:
    claims = tmp_path / "claims.jsonl"
    claims.write_text(scifact.train.read_text().splitlines()[0] + "\n")
    proc = _run("predict", str(claims), "-o", str(tmp_path / "p.jsonl"), "--retrieval", "oracle")
    assert proc.returncode == 2
    assert "need the gold claims: pass --gold" in proc.stderr


def test_verify_cli_json() -> None:
    proc = _run("verify", CLAIM_52, "--json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["claim"] == CLAIM_52
    assert data["verdict"] in ("supported", "conflicting")
    assert GOLD_DOC_52 in [r["doc_id"] for r in data["supporting"]], "doc ids are integers, as in SciFact"
    first = data["supporting"][0]
    assert set(first) >= {"p_evidence", "p_label_correct", "in_prediction", "link", "rationale"}
    assert "confidence" not in first
    proc = _run("verify", "  ")
    assert proc.returncode == 2 and "claim is empty" in proc.stderr
