"""The shipped reader: it loads offline with the shipped decision, reads real pairs, and only lists."""

from __future__ import annotations

import json

import numpy as np

from sciverify.data.io import read_claims, read_corpus
from sciverify.data.records import Label, doc_key
from sciverify.pipeline.verify import default_model_dir, load_verifier


def test_the_shipped_reader_ranks_gold_rationales_above_their_neighbours(scifact) -> None:
    """Real inference with the int8 graph on real pairs: for the first 15 claims with evidence, the
    reader's P(rationale) of each gold rationale sentence against the other sentences of its abstract."""
    from sciverify.models.reader import ReaderModel

    reader = ReaderModel.load(default_model_dir() / "reader")
    corpus = {doc_key(a.doc_id): a for a in read_corpus(scifact.corpus)}
    gold, other = [], []
    claims = [c for c in read_claims(scifact.train) if c.evidence][:15]
    for claim in claims:
        doc, sets = next(iter(claim.evidence.items()))
        abstract = corpus[doc_key(doc)]
        rationale = {i for s in sets for i in s.sentences}
        pairs = [(abstract.title, s) for s in abstract.sentences]
        out = reader.read_pairs(claim.text, pairs)
        assert out.shape == (len(pairs), 4)
        np.testing.assert_allclose(out[:, :3].sum(axis=1), 1.0, atol=1e-4)  # a stance distribution
        gold.extend(out[i, 3] for i in rationale)
        other.extend(out[i, 3] for i in range(len(pairs)) if i not in rationale)
    assert float(np.mean(gold)) > float(np.mean(other)) + 0.3


def test_the_shipped_pipeline_lets_the_reader_list_only() -> None:
    verifier = load_verifier()
    decision = verifier.config.decision
    assert decision.reader_lists_only and decision.label_source == "model"
    assert verifier.reader is not None and verifier.labeler is not None
    assert verifier.emit is not None and not verifier.emit.hears_reader
    training = json.loads((default_model_dir() / "reader" / "training.json").read_text())
    assert training["int8_check"]["pairs"] >= 400
    assert training["int8_check"]["stance_argmax_agreement"] >= 0.95
    manifest = json.loads((default_model_dir() / "reader" / "manifest.json").read_text())
    assert "--reader-role list" in manifest["command"]
    shown = verifier.verify("ALDH1 expression is associated with poorer prognosis for breast cancer.")
    sided = [a for a in shown if a.label is not Label.NOT_ENOUGH_INFO]  # the rest: related, not evidence
    assert sided and all(a.rationale for a in sided)
