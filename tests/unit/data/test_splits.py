from __future__ import annotations

import random

from sciverify.data.io import read_claims
from sciverify.data.splits import split_claims


def test_split_is_grouped_and_deterministic(scifact):
    claims = read_claims(scifact.train)
    split = split_claims(claims)
    assert (len(split.train), len(split.validation)) == (628, 181)
    train_docs = {str(d) for c in split.train for d in c.cited_doc_ids} | {k for c in split.train for k in c.evidence}
    val_docs = {str(d) for c in split.validation for d in c.cited_doc_ids} | {
        k for c in split.validation for k in c.evidence
    }
    assert not train_docs & val_docs
    shuffled = claims[:]
    random.Random(0).shuffle(shuffled)
    again = split_claims(shuffled)
    assert {c.id for c in again.validation} == {c.id for c in split.validation}
