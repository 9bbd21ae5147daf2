"""What the models said about a claim's candidate abstracts: the records the decision reads, filled live by
the Verifier and read back from stored out-of-fold outputs by the cross-validation."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace

import numpy as np
import numpy.typing as npt

from sciverify.data.records import Claim
from sciverify.decision.sentence_rule import blend_scores, reader_sentences
from sciverify.decision.settings import DecisionConfig

__all__ = ["CandidateOutputs", "ClaimOutputs"]


@dataclass(frozen=True)
class CandidateOutputs:
    """What the models said about one candidate abstract of a claim.

    Attributes:
        doc_id: the abstract's doc id (string key, as in predictions).
        retrieval: the retriever's score.
        scores: shape ``(n_sentences,)``: the selector's rationale probability of each sentence.
        label_reads: the label model's probabilities over (SUPPORT, CONTRADICT, NOT_ENOUGH_INFO) when it
            read the title and these sentences (sorted indices), for the sets it has read; empty when the
            label model runs live (the Verifier) rather than from stored outputs.
        stance: shape ``(n_sentences, 3)``: a per-sentence reader's probabilities over (SUPPORT,
            CONTRADICT, NOT_ENOUGH_INFO) for each sentence against the claim; None without such a reader.
        rationale: shape ``(n_sentences,)``: the reader's P(rationale) per sentence; NaN (in both arrays)
            for the sentences it did not read.
    """

    doc_id: str
    retrieval: float
    scores: npt.NDArray[np.float32]
    label_reads: Mapping[tuple[int, ...], npt.NDArray[np.float32]] = field(default_factory=dict)
    stance: npt.NDArray[np.float32] | None = None
    rationale: npt.NDArray[np.float32] | None = None

    def decision_scores(self, cfg: DecisionConfig) -> npt.NDArray[np.float32]:
        """The sentence scores every step of the decision reads: the selector's, with the reader's
        P(rationale) blended in when ``cfg`` uses it (:func:`blend_scores`)."""
        if not cfg.uses_reader:
            return self.scores
        return blend_scores(self.scores, self.rationale, cfg)

    def label_scores(self, cfg: DecisionConfig) -> npt.NDArray[np.float32]:
        """The sentence scores that pick which sentences give the label: the decision's (blended) when
        the reader gives it; the selector's own for the label model, whose stored outputs hold its best
        one and two sentences by those, so a blended listing can sit beside the label model and still be
        scored without rerunning it."""
        return self.decision_scores(cfg) if cfg.label_source == "reader" else self.scores

    def limit_reads(self, cfg: DecisionConfig) -> CandidateOutputs:
        """This candidate as the reader would have left it under ``cfg``: outputs kept only for the
        sentences it reads (:func:`reader_sentences`), NaN elsewhere. Stored outputs hold every sentence,
        so each ``reader_reads`` can be scored without rereading."""
        if self.stance is None or self.rationale is None:
            return self
        keep = np.zeros(len(self.scores), dtype=bool)
        keep[reader_sentences(self.scores, cfg)] = True
        stance = np.where(keep[:, None], self.stance, np.nan).astype(np.float32)
        rationale = np.where(keep, self.rationale, np.nan).astype(np.float32)
        return replace(self, stance=stance, rationale=rationale)


@dataclass(frozen=True)
class ClaimOutputs:
    """One claim with its candidates in retrieval order; ``fold`` is the cross-validation fold that scored
    it (0 outside cross-validation)."""

    claim: Claim
    candidates: tuple[CandidateOutputs, ...]
    fold: int = 0

    @property
    def doc_ids(self) -> list[str]:
        return [c.doc_id for c in self.candidates]

    @property
    def scores(self) -> list[npt.NDArray[np.float32]]:
        return [c.scores for c in self.candidates]

    def limited(self, cfg: DecisionConfig) -> ClaimOutputs:
        """The claim as the reader leaves it under ``cfg`` (:meth:`CandidateOutputs.limit_reads`)."""
        if not cfg.uses_reader:
            return self
        return replace(self, candidates=tuple(x.limit_reads(cfg) for x in self.candidates))
