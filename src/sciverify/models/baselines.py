"""Trivial selectors and label predictors: sanity floors, and stand-ins while no trained model exists.

* :class:`FirstSentencesSelector` scores sentences by position (earlier = higher), the "lead" floor.
* :class:`CosineSelector` scores by the claim/sentence embedding cosine alone, mapped to [0, 1].
* :class:`OracleSelector` scores gold rationale sentences 1 and others 0 (upper-bound runs; needs gold).

Each is registered under its configuration name ("first", "cosine", "oracle", "majority").
* :class:`MajorityLabelPredictor` always answers the training majority (SUPPORT) with fixed odds.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt

from sciverify.data.records import Claim, doc_key
from sciverify.errors import ConfigError
from sciverify.models.base import LABEL_PREDICTORS, SELECTORS
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
    """Gold rationale sentences score 1, the rest 0: the gold evidence of the claim (matched by its text)
    in the candidate abstract (matched by ``AbstractInput.doc_id``).

    The gold claims are given once, when the selector is built (``Verifier.load(gold=...)``), the same
    route by which the oracle retriever gets them.
    """

    def __init__(self, gold: Sequence[Claim]) -> None:
        self._gold: dict[str, dict[str, set[int]]] = {}
        for claim in gold:
            docs = self._gold.setdefault(claim.text, {})
            for key, sets in claim.evidence.items():
                docs.setdefault(key, set()).update(j for s in sets for j in s.sentences)

    def score(
        self, claim: str, claim_emb: npt.NDArray[np.floating], abstracts: Sequence[AbstractInput]
    ) -> list[npt.NDArray[np.float32]]:
        gold = self._gold.get(claim, {})
        out = []
        for a in abstracts:
            s = np.zeros(len(a.sentences), dtype=np.float32)
            for j in gold.get(doc_key(a.doc_id), set()) if a.doc_id is not None else ():
                if 0 <= j < len(s):
                    s[j] = 1.0
            out.append(s)
        return out


class MajorityLabelPredictor:
    """Always the SciFact training majority: SUPPORT, with the class frequencies as probabilities."""

    PROBS = np.array([0.55, 0.30, 0.15], dtype=np.float32)

    def predict(self, claim: str, evidences: Sequence[tuple[str, Sequence[str]]]) -> npt.NDArray[np.float32]:
        return np.tile(self.PROBS, (len(evidences), 1))


@SELECTORS.register("first")
def _first(model_dir: Path | None, gold: Sequence[Claim] | None) -> FirstSentencesSelector:
    return FirstSentencesSelector()


@SELECTORS.register("cosine")
def _cosine(model_dir: Path | None, gold: Sequence[Claim] | None) -> CosineSelector:
    return CosineSelector()


@SELECTORS.register("oracle")
def _oracle(model_dir: Path | None, gold: Sequence[Claim] | None) -> OracleSelector:
    if gold is None:
        raise ConfigError("the oracle rationale selector needs the gold claims (--gold)")
    return OracleSelector(gold)


@LABEL_PREDICTORS.register("majority")
def _majority(model_dir: Path | None) -> MajorityLabelPredictor:
    return MajorityLabelPredictor()
