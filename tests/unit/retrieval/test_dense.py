"""The dense part with the real MiniLM model, on the six-abstract corpus (a few seconds)."""

from __future__ import annotations

import numpy as np
import pytest

from sciverify.retrieval import methods
from sciverify.retrieval.base import RetrievalConfig
from sciverify.retrieval.embedder import get_embedder
from sciverify.retrieval.index import CorpusIndex
from sciverify.retrieval.methods import make_retriever

PARAPHRASES = {
    "Physical activity helps older people remember things.": 55,
    "Cigarettes cause cancer of the lungs.": 44,
    "Bacteria in the intestine are linked to being overweight.": 33,
    "Taking a daily pill of acetylsalicylic acid prevents heart attacks.": 11,
}


@pytest.fixture()
def index(tiny_dense_index) -> CorpusIndex:
    return tiny_dense_index


def test_embeddings_match_the_embedder_and_are_memory_mapped(index, tiny):
    assert index.has_dense
    assert isinstance(index.all_sentence_embeddings, np.memmap)
    assert index.all_sentence_embeddings.shape == (12, 384)
    assert index.all_sentence_embeddings.dtype == np.float16
    embedder = get_embedder()
    for row, (_, title, sentences) in enumerate(tiny):
        got = index.sentence_embeddings(row).astype(np.float32)
        np.testing.assert_allclose(got, embedder.encode(sentences), atol=2e-3)
        np.testing.assert_allclose(
            index.title_embeddings[row].astype(np.float32), embedder.encode([title])[0], atol=2e-3
        )
    norms = np.linalg.norm(index.doc_embeddings.astype(np.float32), axis=1)
    np.testing.assert_allclose(norms, 1.0, atol=2e-3)


@pytest.mark.parametrize("mode", ["doc", "maxsim"])
def test_dense_retrieval_finds_paraphrases(index, mode):
    retriever = make_retriever(index, RetrievalConfig(method="dense", dense_mode=mode))
    hits = retriever.retrieve(list(PARAPHRASES), k=2)
    assert [h[0].doc_id for h in hits] == list(PARAPHRASES.values())


def test_streamed_and_resident_scoring_agree(index, monkeypatch):
    claims = list(PARAPHRASES)
    resident = make_retriever(index, RetrievalConfig(method="dense", dense_mode="maxsim")).scores(claims)
    monkeypatch.setattr(methods, "RESIDENT_ROWS", 0)
    monkeypatch.setattr(methods, "_CHUNK", 5)
    streamed = make_retriever(index, RetrievalConfig(method="dense", dense_mode="maxsim")).scores(claims)
    np.testing.assert_allclose(streamed, resident, atol=1e-6)


def test_fusion_ranks_exact_and_paraphrased_claims(index):
    retriever = make_retriever(index, RetrievalConfig(method="fusion", k=1))
    claims = ["Statins reduce LDL cholesterol.", *PARAPHRASES]
    assert [h[0].doc_id for h in retriever.retrieve(claims, k=1)] == [66, *PARAPHRASES.values()]


def test_default_index_is_built_once_where_the_env_says(tiny_corpus, tmp_path, monkeypatch):
    from sciverify.retrieval import builder
    from sciverify.retrieval.index import default_index_dir, ensure_default_index

    monkeypatch.setenv("SCIVERIFY_INDEX", str(tmp_path / "default-index"))
    first = ensure_default_index(progress=False, data_dir=tiny_corpus.parent)
    assert first.root == default_index_dir() == tmp_path / "default-index"
    assert first.has_dense and len(first) == 6

    def fail(*args: object, **kwargs: object) -> None:
        raise AssertionError("rebuilt an existing index")

    monkeypatch.setattr(builder, "build_index_unlocked", fail)
    assert ensure_default_index(progress=False).manifest == first.manifest


def test_maxsim_over_candidates_when_sentences_are_too_many_to_scan(index, monkeypatch):
    claims = list(PARAPHRASES)
    exact = make_retriever(index, RetrievalConfig(method="dense", dense_mode="maxsim")).scores(claims)
    monkeypatch.setattr(methods, "RESIDENT_ROWS", 0)
    monkeypatch.setattr(methods, "_CHUNK", 4)
    everything = make_retriever(index, RetrievalConfig(method="dense", dense_mode="maxsim"))
    np.testing.assert_allclose(everything.scores(claims), exact, atol=1e-5)  # 6 docs <= 256 candidates
    monkeypatch.setattr(methods, "MAXSIM_CANDIDATES", 2)
    two = make_retriever(index, RetrievalConfig(method="dense", dense_mode="maxsim")).scores(claims)
    for row, want in zip(two, exact, strict=True):
        top = np.argsort(-row)[:2]
        np.testing.assert_allclose(row[top], want[top], atol=1e-5)
        assert (np.delete(row, top) < -1.0).all()
        assert top[0] == np.argmax(want)
