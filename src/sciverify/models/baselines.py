"""Trivial selectors and label predictors: sanity floors, and stand-ins while no trained model exists.

* :class:`FirstSentencesSelector` scores sentences by position (earlier = higher), the "lead" floor.
* :class:`CosineSelector` scores by the claim/sentence embedding cosine alone, mapped to [0, 1].
* :class:`OracleSelector` scores gold rationale sentences 1 and others 0 (upper-bound runs; needs gold).
* :class:`MajorityLabelPredictor` always answers the training majority (SUPPORT) with fixed odds.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import numpy.typing as npt

from sciverify.models.features import AbstractInput

__all__ = ["CosineSelector", "FirstSentencesSelector", "MajorityLabelPredictor", "OracleSelector"]


class FirstSentencesSelector:
    """Score ``1 / (1 + position)``: the first sentence 1.0, the second 0.5, ..."""

    def score(
        self, claim: str, claim_emb: npt.NDArray[np.floating], abstracts: Sequence[AbstractInput]
    ) -> list[npt.NDArray[np.float32]]:
        return [1.0 / (1.0 + np.arange(len(a.sentences), dtype=np.float32)) for a in abstracts]


class CosineSelector:
    """Score ``(1 + cos) / 2`` between claim and sentence embeddings."""

    def score(
        self, claim: str, claim_emb: npt.NDArray[np.floating], abstracts: Sequence[AbstractInput]
    ) -> list[npt.NDArray[np.float32]]:
        u = np.asarray(claim_emb, dtype=np.float32)
        return [
            ((np.asarray(a.sentence_emb, dtype=np.float32) @ u + 1.0) / 2.0).astype(np.float32)
            for a in abstracts
        ]


class OracleSelector:
    """Gold rationale sentences score 1, the rest 0. ``gold`` maps a claim text to {doc position: sentences}.

    Abstracts are matched by their position in the candidate list through ``keys``, set per claim with
    :meth:`bind` before :meth:`score` (the pipeline does this for ``--rationale oracle`` runs).
    """

    def __init__(self) -> None:
        self._gold: Mapping[int, set[int]] = {}

    def bind(self, gold_by_candidate: Mapping[int, set[int]]) -> None:
        self._gold = gold_by_candidate

    def score(
        self, claim: str, claim_emb: npt.NDArray[np.floating], abstracts: Sequence[AbstractInput]
    ) -> list[npt.NDArray[np.float32]]:
        out = []
        for i, a in enumerate(abstracts):
            s = np.zeros(len(a.sentences), dtype=np.float32)
            for j in self._gold.get(i, set()):
                if 0 <= j < len(s):
                    s[j] = 1.0
            out.append(s)
        return out


class MajorityLabelPredictor:
    """Always the SciFact training majority: SUPPORT, with the class frequencies as probabilities."""

    PROBS = np.array([0.55, 0.30, 0.15], dtype=np.float32)

    def predict(self, claim: str, evidences: Sequence[tuple[str, Sequence[str]]]) -> npt.NDArray[np.float32]:
        return np.tile(self.PROBS, (len(evidences), 1))
