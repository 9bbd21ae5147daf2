"""Batches side by side give the same vectors as one batch at a time: the index build may use every
core without changing a single byte of the index (and so no prediction)."""

from __future__ import annotations

import numpy as np

from sciverify.data.io import read_corpus
from sciverify.retrieval.stages import EmbedStage


def test_sessions_side_by_side_give_identical_bytes(scifact) -> None:
    texts: list[str] = []
    for abstract in read_corpus(scifact.corpus)[:40]:
        texts += [abstract.title, *abstract.sentences]
    texts += ["", "   "]  # blank texts: the zero vector either way
    one = EmbedStage(128, 16)()(texts)  # the process-wide embedder: one session, every core
    two = EmbedStage(128, 16, sessions=2)()(texts)
    three = EmbedStage(128, 16, threads=1, sessions=3)()(texts)
    assert len(texts) > 16 * 6, "many batches, so every session runs several"
    assert one.dtype == two.dtype == np.float16 and one.shape == (len(texts), 384)
    assert one.tobytes() == two.tobytes() == three.tobytes()
    assert not one[-2:].any() and one[:-2].any(axis=1).all()
