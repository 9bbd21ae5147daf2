"""Sentence scorer: training rows from real claims, a tiny real training run, loading and blending."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from sciverify.data.io import read_claims, read_corpus
from sciverify.data.records import doc_key
from sciverify.errors import ArtifactError, ConfigError
from sciverify.models.sentence_scorer import SentenceScorer
from sciverify.training.scorer_train import ScorerTrainConfig, scorer_pairs, train_sentence_scorer


class _Corpus:
    """The two methods of the index that row building needs, over the real corpus file."""

    def __init__(self, path: Path) -> None:
        self.docs = list(read_corpus(path))
        self.rows = {doc_key(d.doc_id): i for i, d in enumerate(self.docs)}

    def row_of(self, doc_id: object) -> int | None:
        return self.rows.get(doc_key(doc_id))  # type: ignore[arg-type]

    def sentences(self, row: int) -> tuple[str, ...]:
        return tuple(self.docs[row].sentences)


@pytest.fixture(scope="module")
def corpus(scifact) -> _Corpus:
    return _Corpus(scifact.corpus)


def test_pairs_mark_exactly_the_gold_rationale_sentences(scifact, corpus: _Corpus) -> None:
    claim = next(c for c in read_claims(scifact.train) if c.evidence)
    pairs = scorer_pairs([claim], corpus)
    gold = {
        (row, i)
        for key, sets in claim.evidence.items()
        if (row := corpus.row_of(key)) is not None
        for s in sets
        for i in s.sentences
    }
    expected_rows = {corpus.row_of(k) for k in claim.evidence}
    expected_rows |= {corpus.row_of(d) for d in claim.cited_doc_ids}
    assert len(pairs) == sum(len(corpus.sentences(r)) for r in expected_rows if r is not None)
    assert sum(p.label for p in pairs) == len(gold)
    assert all(p.claim == claim.text and len(p.sentences) == 1 for p in pairs)


def test_negation_repeats_evidence_claims_with_the_same_rationales(scifact, corpus: _Corpus) -> None:
    claim = next(c for c in read_claims(scifact.train) if c.evidence)
    plain = scorer_pairs([claim], corpus)
    doubled = scorer_pairs([claim], corpus, negate=lambda text: "It is not true that " + text)
    assert len(doubled) == 2 * len(plain)
    assert [p.label for p in doubled[len(plain) :]] == [p.label for p in plain]


def test_hard_negatives_skip_evidence_and_need_a_retriever(scifact, corpus: _Corpus) -> None:
    claim = next(c for c in read_claims(scifact.train) if c.evidence)
    evidence_row = corpus.row_of(next(iter(claim.evidence)))
    other = next(r for r in range(10) if r != evidence_row)
    pairs = scorer_pairs([claim], corpus, hard_negative_docs=1, retrieve=lambda _t, _n: [evidence_row, other])
    extra = scorer_pairs([claim], corpus)
    assert len(pairs) == len(extra) + len(corpus.sentences(other))
    with pytest.raises(ConfigError, match="retriever"):
        scorer_pairs([claim], corpus, hard_negative_docs=1)


def test_config_rejects_bad_values() -> None:
    with pytest.raises(ConfigError):
        ScorerTrainConfig(max_length=4)
    with pytest.raises(ConfigError):
        ScorerTrainConfig(positive_weight=0)


def test_tiny_training_run_yields_a_loadable_int8_scorer(scifact, corpus: _Corpus, tmp_path: Path) -> None:
    claims = read_claims(scifact.train)
    out = tmp_path / "scorer"
    metrics = train_sentence_scorer(ScorerTrainConfig.tiny(), claims, corpus, out, progress=False)
    assert metrics["stage"]["steps"] > 0 and metrics["positives"] > 0
    scorer = SentenceScorer.load(out)
    probs = scorer.score(claims[0].text, ["A first sentence.", "A second, longer sentence about cells."])
    assert probs.shape == (2,) and np.all((probs >= 0) & (probs <= 1))
    assert scorer.score(claims[0].text, []).shape == (0,)
    # one abstract per call: scoring a sentence alone or among its abstract's others is close, not exact
    alone = scorer.score(claims[0].text, ["A first sentence."])
    assert abs(float(alone[0]) - float(probs[0])) < 0.2
    # calls side by side (one per core) give exactly what they give one at a time
    from sciverify.models.parallel import map_calls

    claim = next(c for c in claims if c.evidence)
    rows = [r for key in claim.evidence if (r := corpus.row_of(key)) is not None] + [0, 1, 2]
    groups = [list(corpus.sentences(r)[:4]) for r in rows]
    together = map_calls(lambda group: scorer.score(claim.text, group), groups)
    for group, got in zip(groups, together, strict=True):
        assert np.array_equal(got, scorer.score(claim.text, group))


def test_a_damaged_or_foreign_config_is_refused(tmp_path: Path) -> None:
    for name in ("model.onnx", "tokenizer.json"):
        (tmp_path / name).write_text("x")
    (tmp_path / "config.json").write_text(json.dumps({"kind": "label-model", "config_version": 1}))
    with pytest.raises(ArtifactError, match="not a sentence scorer"):
        SentenceScorer.load(tmp_path)
    with pytest.raises(ArtifactError, match="not found"):
        SentenceScorer.load(tmp_path / "missing")


def test_scorer_body_starts_from_a_label_checkpoint_and_the_head_stays_fresh(tmp_path: Path) -> None:
    torch = pytest.importorskip("torch")
    from sciverify.models.label_torch import build_classifier
    from sciverify.training.scorer_train import load_body

    label = build_classifier(seed=1)  # 3-way head, as the label model's aux checkpoint holds
    with torch.no_grad():
        label.body.encoder.layer[0].attention.self.query.weight.add_(0.5)
    checkpoint = tmp_path / "aux.pt"
    torch.save({"stamp": "x", "state": label.state_dict()}, checkpoint)

    scorer = build_classifier(seed=2, num_labels=2)
    head_before = scorer.head.weight.detach().clone()
    load_body(scorer, checkpoint)
    for name, value in label.body.state_dict().items():
        assert torch.equal(scorer.body.state_dict()[name], value), name
    assert torch.equal(scorer.head.weight, head_before)  # 2-way head untouched

    with pytest.raises(ArtifactError, match="not found"):
        load_body(scorer, tmp_path / "missing.pt")
    torch.save({"stamp": "x", "state": {"head.weight": torch.zeros(2, 2)}}, tmp_path / "headless.pt")
    with pytest.raises(ArtifactError, match="no body weights"):
        load_body(scorer, tmp_path / "headless.pt")
