from __future__ import annotations

import random

from sciverify.data.io import read_claims
from sciverify.data.splits import split_claims


def test_split_is_grouped_and_deterministic(scifact):
    claims = read_claims(scifact.train)
    split = split_claims(claims)
    assert (len(split.train), len(split.validation)) == (628, 181)
    def docs(part):
        return {str(d) for c in part for d in c.cited_doc_ids} | {k for c in part for k in c.evidence}

    train_docs, val_docs = docs(split.train), docs(split.validation)
    assert not train_docs & val_docs
    shuffled = claims[:]
    random.Random(0).shuffle(shuffled)
    again = split_claims(shuffled)
    assert {c.id for c in again.validation} == {c.id for c in split.validation}
