from __future__ import annotations

import bm25s
import numpy as np
import pytest

from sciverify.retrieval.bm25 import Bm25Accumulator, Bm25Tokenizer
from sciverify.retrieval.index import CorpusIndex, IndexConfig, build_index


def test_tokenizer_lowercases_drops_stopwords_and_stems():
    assert Bm25Tokenizer("english")("The Mice were treated with Statins, and 2 x") == [
        "mice",
        "were",
        "treat",
        "statin",
    ]
    assert Bm25Tokenizer(None)("The Mice were treated") == ["mice", "were", "treated"]


@pytest.mark.parametrize("method", ["lucene", "robertson", "atire"])
def test_scores_equal_an_index_built_by_bm25s(tiny_corpus, tiny, tmp_path, method):
    config = IndexConfig(dense=False, bm25_method=method, bm25_k1=1.3, bm25_b=0.6)
    index = CorpusIndex.open(build_index(tiny_corpus, tmp_path / "idx", config, progress=False))
    tokenizer = Bm25Tokenizer("english")
    reference = bm25s.BM25(k1=1.3, b=0.6, method=method)
    reference.index(
        [tokenizer(title + " " + " ".join(sents)) for _, title, sents in tiny], show_progress=False
    )
    for query in [
        "aspirin risk of myocardial infarction",
        "risk risk lowers",
        "mice obese lean",
        "unknownword",
    ]:
        tokens = [t for t in tokenizer(query) if t in reference.vocab_dict]
        expected = reference.get_scores(tokens) if tokens else np.zeros(len(tiny))
        np.testing.assert_allclose(index.bm25.scores(query), expected, rtol=1e-5, atol=1e-6)


def test_directory_is_a_plain_bm25s_index(tiny_corpus, tmp_path):
    root = build_index(tiny_corpus, tmp_path / "idx", IndexConfig(dense=False), progress=False)
    ours = CorpusIndex.open(root).bm25
    theirs = bm25s.BM25.load(root / "bm25", mmap=True, load_vocab=True)
    tokens = Bm25Tokenizer("english")("statin therapy and LDL cholesterol")
    np.testing.assert_allclose(theirs.get_scores(tokens), ours.scores("statin therapy and LDL cholesterol"))
    assert ours.token_id("statin") == theirs.vocab_dict["statin"]
    assert ours.token_id("nosuchtoken") is None


def test_chunked_build_equals_single_chunk(tiny):
    texts = [title + " " + " ".join(sents) for _, title, sents in tiny] * 3
    results = []
    for chunk in (1, 4, 1000):
        acc = Bm25Accumulator(Bm25Tokenizer("english"), chunk_docs=chunk)
        for text in texts:
            acc.add(text)
        results.append(acc.matrix("lucene", 1.2, 0.75))
    for data, indices, indptr in results[:2]:
        np.testing.assert_array_equal(indptr, results[2][2])
        np.testing.assert_array_equal(indices, results[2][1])
        np.testing.assert_allclose(data, results[2][0], rtol=1e-6)
    data, indices, indptr = results[2]
    assert indptr[-1] == len(data) == len(indices)
    for col in range(len(indptr) - 1):  # doc rows ascend inside every token column
        assert np.all(np.diff(indices[indptr[col] : indptr[col + 1]]) > 0)
