from __future__ import annotations

import numpy as np
import pytest

from sciverify.data.records import Claim, EvidenceSet, Label
from sciverify.errors import ConfigError
from sciverify.retrieval.base import Hit, RetrievalConfig, Retriever, top_k
from sciverify.retrieval.evaluate import evaluate_hits
from sciverify.retrieval.index import CorpusIndex, IndexConfig, build_index
from sciverify.retrieval.methods import fuse_scores, make_retriever

QUERIES = {
    "Aspirin lowers the risk of myocardial infarction.": 11,
    "Vitamin D supplements prevent fractures in elderly women.": 22,
    "Obese mice carry fewer Bacteroidetes.": 33,
    "Tobacco smoking causes lung cancer.": 44,
    "Statins reduce LDL cholesterol.": 66,
}


@pytest.fixture()
def lexical_index(tiny_corpus, tmp_path) -> CorpusIndex:
    return CorpusIndex.open(
        build_index(tiny_corpus, tmp_path / "idx", IndexConfig(dense=False), progress=False)
    )


@pytest.mark.parametrize("method", ["bm25", "tfidf"])
def test_lexical_retrievers_rank_the_right_abstract_first(lexical_index, method):
    retriever = make_retriever(lexical_index, RetrievalConfig(method=method))
    assert isinstance(retriever, Retriever)
    hits = retriever.retrieve(list(QUERIES), k=3)
    assert [h[0].doc_id for h in hits] == list(QUERIES.values())
    assert all(len(h) == 3 for h in hits)
    for ranked in hits:
        assert [h.score for h in ranked] == sorted((h.score for h in ranked), reverse=True)
        assert all(lexical_index.doc_id(h.row) == h.doc_id for h in ranked)


def test_k_larger_than_corpus_and_empty_batches(lexical_index):
    retriever = make_retriever(lexical_index, RetrievalConfig(method="bm25"))
    assert len(retriever.retrieve(["aspirin"], k=50)[0]) == 6
    assert retriever.retrieve([], k=3) == []
    nothing = retriever.retrieve(["zzzz qqqq"], k=2)[0]
    assert [h.score for h in nothing] == [0.0, 0.0]


def test_top_k_breaks_ties_by_row(lexical_index):
    scores = np.array([0.5, 0.9, 0.5, 0.9, 0.1, 0.0], dtype=np.float32)
    assert [h.row for h in top_k(lexical_index, scores, 4)] == [1, 3, 0, 2]


def test_oracle_returns_gold_then_cited_docs(lexical_index):
    claim = Claim(1, "c", {"44": (EvidenceSet((0,), Label.SUPPORT),)}, cited_doc_ids=(22, 44, 999))
    retriever = make_retriever(lexical_index, RetrievalConfig(method="oracle"), claims=[claim])
    assert retriever.retrieve(["c", "unknown"], k=1) == [[Hit(3, 44, 1.0), Hit(1, 22, 0.5)], []]
    with pytest.raises(ConfigError, match="gold claims"):
        make_retriever(lexical_index, RetrievalConfig(method="oracle"))


def test_unknown_method_and_bad_config():
    with pytest.raises(ConfigError, match="unknown retrieval method 'magic'"):
        make_retriever(None, RetrievalConfig(method="magic"))  # type: ignore[arg-type]
    with pytest.raises(ConfigError):
        RetrievalConfig(k=0)
    with pytest.raises(ConfigError):
        RetrievalConfig(fusion="max")


def test_fusion_is_a_weighted_sum_of_normalised_scores():
    lexical = np.array([[10.0, 5.0, 0.0, 0.0]], dtype=np.float32)
    dense = np.array([[0.2, 0.9, 0.5, 0.1]], dtype=np.float32)
    fused = fuse_scores(lexical, dense, RetrievalConfig(fusion="score", fusion_weight=0.5, fusion_depth=4))
    np.testing.assert_allclose(
        fused, [[0.5 * 1 + 0.5 * 0.125, 0.5 * 0.5 + 0.5 * 1, 0.5 * 0.5, 0.0]], atol=1e-6
    )
    rrf = fuse_scores(
        lexical, dense, RetrievalConfig(fusion="rrf", fusion_weight=0.5, rrf_k=1, fusion_depth=2)
    )
    np.testing.assert_allclose(rrf, [[0.5 / 2, 0.5 / 3 + 0.5 / 2, 0.5 / 3, 0.0]], atol=1e-6)


def test_recall_and_mrr_by_hand():
    gold = Label.SUPPORT
    claims = [
        Claim(
            1, "a", {"1": (EvidenceSet((0,), gold),), "2": (EvidenceSet((0,), gold),)}, cited_doc_ids=(1, 2)
        ),
        Claim(2, "b", {}, cited_doc_ids=(5,)),
        Claim(3, "c", {"9": (EvidenceSet((0,), gold),)}, cited_doc_ids=(9,)),
    ]
    hits = [
        [Hit(0, 7, 1.0), Hit(1, 2, 0.9), Hit(2, 1, 0.8)],
        [Hit(0, 5, 1.0)],
        [Hit(0, 3, 1.0)],
    ]
    evidence = evaluate_hits(claims, hits, "evidence")
    assert evidence.n_claims == 2
    assert evidence.recall[1] == 0.0
    assert evidence.recall[3] == pytest.approx((1.0 + 0.0) / 2)
    assert evidence.mrr == pytest.approx((1 / 2 + 0) / 2)
    cited = evaluate_hits(claims, hits, "cited")
    assert cited.n_claims == 3
    assert cited.recall[1] == pytest.approx(1 / 3)
    assert cited.mrr == pytest.approx((1 / 2 + 1 + 0) / 3)
