"""The shipped label model: real int8 ONNX inference on real SciFact claims and abstracts."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from sciverify.data.io import read_claims, read_corpus
from sciverify.data.records import Label, doc_key
from sciverify.errors import ArtifactError
from sciverify.models.label import LABEL_ORDER, LabelModel, default_label_weights_dir


@pytest.fixture(scope="module")
def model() -> LabelModel:
    return LabelModel.load()


@pytest.fixture(scope="module")
def scifact_train(scifact):
    corpus = {doc_key(a.doc_id): a for a in read_corpus(scifact.corpus)}
    claims = {c.id: c for c in read_claims(scifact.train)}
    return claims, corpus


def _gold(claims, corpus, claim_id):
    claim = claims[claim_id]
    key, sets = next(iter(claim.evidence.items()))
    doc = corpus[key]
    sentences = [doc.sentences[i] for i in sorted({i for s in sets for i in s.sentences})]
    return claim, sets[0].label, (doc.title, sentences)


def test_shipped_files_and_config() -> None:
    directory = default_label_weights_dir()
    for name in ("model.onnx", "tokenizer.json", "config.json", "MODEL_CARD.md"):
        assert (directory / name).is_file(), name
    # the int8 mpnet6 graph is 67 MB; every shipped weight file together stays within 150 MB
    assert (directory / "model.onnx").stat().st_size < 80_000_000
    shipped = sum(f.stat().st_size for f in directory.parent.rglob("*") if f.is_file())
    assert shipped <= 150_000_000, shipped
    config = json.loads((directory / "config.json").read_text())
    assert config["labels"] == [label.value for label in LABEL_ORDER]


def test_predict_shapes_and_probabilities(model: LabelModel, scifact_train) -> None:
    claims, corpus = scifact_train
    claim, _, evidence = _gold(claims, corpus, CLEAR_SUPPORT)
    other = next(iter(corpus.values()))
    probs = model.predict(claim.text, [evidence, (other.title, other.sentences[:2]), ("", [])])
    assert probs.shape == (3, 3) and probs.dtype == np.float32
    assert np.allclose(probs.sum(axis=1), 1.0, atol=1e-4)
    assert (probs >= 0).all()
    assert model.predict(claim.text, []).shape == (0, 3)


def test_a_verdict_does_not_depend_on_its_batch_mates(model: LabelModel, scifact_train) -> None:
    claims, corpus = scifact_train
    claim, _, evidence = _gold(claims, corpus, CLEAR_SUPPORT)
    long_doc = max(corpus.values(), key=lambda d: len(" ".join(d.sentences)))
    other = (long_doc.title, long_doc.sentences)
    alone = model.predict(claim.text, [evidence])
    # Dynamic int8 quantisation scales activations over the whole input tensor: batched, the long
    # abstract (and its padding) would shift the first verdict. Row by row it must be exact.
    assert np.array_equal(model.predict(claim.text, [evidence, other])[0], alone[0])
    assert np.array_equal(model.predict(claim.text, [other, evidence])[1], alone[0])


# Claims from claims_train.jsonl (training split) against the same abstract and rationale:
# 76 "Active Ly49Q induces neutrophil polarization." (SUPPORT) and its negated twin
# 77 "Active Ly49Q prevents neutrophil polarization." (CONTRADICT). The model must follow the verb.
CLEAR_SUPPORT = 76
CLEAR_CONTRADICT = 77
UNRELATED_CLAIM = 178  # about birth weight and breast cancer: its cited abstract says nothing on Ly49Q


@pytest.mark.parametrize("claim_id", [CLEAR_SUPPORT, CLEAR_CONTRADICT])
def test_clear_examples_get_their_gold_label(model: LabelModel, scifact_train, claim_id) -> None:
    claims, corpus = scifact_train
    claim, gold, evidence = _gold(claims, corpus, claim_id)
    probs = model.predict(claim.text, [evidence])
    assert model.labels_for(probs) == [gold]
    assert probs[0, LABEL_ORDER.index(gold)] > 0.5


def test_topically_unrelated_abstract_is_not_support(model: LabelModel, scifact_train) -> None:
    claims, corpus = scifact_train
    claim, _, _ = _gold(claims, corpus, CLEAR_SUPPORT)
    unrelated = corpus[doc_key(claims[UNRELATED_CLAIM].cited_doc_ids[0])]
    probs = model.predict(claim.text, [(unrelated.title, unrelated.sentences[:2])])
    assert model.labels_for(probs) != [Label.SUPPORT]


def test_missing_or_outdated_weights_are_artifact_errors(tmp_path: Path) -> None:
    with pytest.raises(ArtifactError, match="not found"):
        LabelModel.load(tmp_path / "nowhere")
    copy = tmp_path / "label"
    shutil.copytree(default_label_weights_dir(), copy)
    (copy / "tokenizer.json").unlink()
    with pytest.raises(ArtifactError, match="missing"):
        LabelModel.load(copy)
    shutil.copy(default_label_weights_dir() / "tokenizer.json", copy / "tokenizer.json")
    config = json.loads((copy / "config.json").read_text())
    (copy / "config.json").write_text(json.dumps({**config, "config_version": 999}))
    with pytest.raises(ArtifactError, match="config_version"):
        LabelModel.load(copy)
