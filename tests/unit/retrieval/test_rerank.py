"""The reranking rule by hand: normalised retrieval score mixed with the best sentence score."""

from __future__ import annotations

import pytest

from sciverify.retrieval.base import Hit
from sciverify.retrieval.rerank import rerank

HITS = [Hit(0, "a", 9.0), Hit(1, "b", 7.0), Hit(2, "c", 5.0)]  # normalised: 1.0, 0.5, 0.0


def _ids(hits: list[Hit]) -> list[str]:
    return [str(h.doc_id) for h in hits]


def test_weight_zero_keeps_the_retriever_order_and_weight_one_follows_the_sentences() -> None:
    best = [0.1, 0.9, 0.5]
    assert _ids(rerank(HITS, best, 0.0)) == ["a", "b", "c"]
    assert _ids(rerank(HITS, best, 1.0)) == ["b", "c", "a"]


def test_the_mix_by_hand() -> None:
    # w 0.5: a 0.5*1.0 + 0.5*0.1 = 0.55, b 0.25 + 0.45 = 0.70, c 0 + 0.45 = 0.45
    got = rerank(HITS, [0.1, 0.9, 0.9], 0.5)
    assert _ids(got) == ["b", "a", "c"]
    assert [h.score for h in got] == [7.0, 9.0, 5.0]  # retrieval scores travel unchanged


def test_ties_keep_the_retriever_order_and_equal_scores_do_not_divide_by_zero() -> None:
    flat = [Hit(i, str(i), 3.0) for i in range(4)]
    assert _ids(rerank(flat, [0.2, 0.2, 0.2, 0.2], 0.5)) == ["0", "1", "2", "3"]
    assert _ids(rerank(flat, [0.0, 0.3, 0.0, 0.3], 0.5)) == ["1", "3", "0", "2"]
    assert rerank([], [], 0.5) == []
    with pytest.raises(ValueError, match="3 hits but 2 sentence scores"):
        rerank(HITS, [0.1, 0.2], 0.5)
