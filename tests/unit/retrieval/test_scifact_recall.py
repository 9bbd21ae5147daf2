"""Sanity of the lexical retrievers on the real SciFact corpus and validation split (dense off: seconds)."""

from __future__ import annotations

import pytest

from sciverify.data.io import read_claims, read_corpus
from sciverify.data.splits import split_claims
from sciverify.retrieval.base import RetrievalConfig
from sciverify.retrieval.evaluate import evaluate_hits
from sciverify.retrieval.index import CorpusIndex, IndexConfig, build_index
from sciverify.retrieval.methods import make_retriever


@pytest.fixture(scope="module")
def scifact_index(scifact, tmp_path_factory) -> CorpusIndex:
    out = tmp_path_factory.mktemp("scifact") / "index"
    return CorpusIndex.open(build_index(scifact.corpus, out, IndexConfig(dense=False), progress=False))


def test_index_holds_the_corpus_exactly(scifact, scifact_index):
    corpus = read_corpus(scifact.corpus)
    assert len(scifact_index) == len(corpus) == 5183
    for row in (0, 1234, len(corpus) - 1):
        assert scifact_index.abstract(row) == corpus[row]
        assert scifact_index.row_of(corpus[row].doc_id) == row
    assert scifact_index.n_sentences == sum(len(a.sentences) for a in corpus)


@pytest.mark.parametrize(("method", "floor"), [("bm25", 0.88), ("tfidf", 0.80)])
def test_recall_at_3_on_validation(scifact, scifact_index, method, floor):
    validation = split_claims(read_claims(scifact.train)).validation
    retriever = make_retriever(scifact_index, RetrievalConfig(method=method))
    report = evaluate_hits(validation, retriever.retrieve([c.text for c in validation], k=20), "evidence")
    assert report.n_claims == 116
    assert report.recall[3] >= floor
    assert report.recall[20] >= report.recall[3]
