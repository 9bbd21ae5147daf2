"""The oracle selector reads the gold it was built with, matched by claim text and doc id."""

from __future__ import annotations

import numpy as np

from sciverify.data.records import Claim, EvidenceSet, Label
from sciverify.models.catalog import get_selector
from sciverify.models.features import AbstractInput


def _abstract(n: int, doc_id: int | str | None) -> AbstractInput:
    emb = np.zeros((n, 4), np.float32)
    return AbstractInput(tuple(f"s{i}." for i in range(n)), emb, np.zeros(4, np.float32), doc_id=doc_id)


def test_the_oracle_scores_exactly_the_gold_rationale_sentences() -> None:
    gold = [
        Claim(
            1, "A raises B.", {"7": (EvidenceSet((0, 2), Label.SUPPORT), EvidenceSet((3,), Label.SUPPORT))}
        ),
        Claim(2, "C lowers D.", {"8": (EvidenceSet((1,), Label.CONTRADICT),)}),
    ]
    oracle = get_selector("oracle", None, gold)
    emb = np.zeros(4, np.float32)
    scores = oracle.score("A raises B.", emb, [_abstract(5, 7), _abstract(3, "8"), _abstract(2, None)])
    assert [s.tolist() for s in scores] == [[1, 0, 1, 1, 0], [0, 0, 0], [0, 0]]
    (other,) = oracle.score("C lowers D.", emb, [_abstract(3, 8)])
    assert other.tolist() == [0, 1, 0]
    assert oracle.score("unknown claim", emb, [_abstract(2, 7)])[0].tolist() == [0, 0]
