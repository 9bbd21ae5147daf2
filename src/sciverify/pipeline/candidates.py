"""The one path from what the models said about a claim's candidate abstracts to its prediction.

Serving (:class:`sciverify.pipeline.verify.Verifier`), the cross-validation and the final fit
(:mod:`sciverify.training.cv`) all go through here, so a rule or a model added here reaches training and
serving together:

1. every candidate abstract of a claim gets a :class:`CandidateOutputs`: its retrieval score, a rationale
   score per sentence, and optionally per-sentence stance probabilities (a reader that reads each
   (claim, sentence) pair) and the label model's probabilities for the sentence sets it has read;
2. :func:`label_requests` says which candidates the label model reads and which of their sentences: the
   decision rule's choice (:func:`sciverify.models.decision.read_sentences`) on the selector's own scores
   (:meth:`CandidateOutputs.label_scores`), made in one place. The Verifier runs the label model on
   exactly those; the cross-validation looks them up in what it stored;
3. :func:`verdicts` turns the outputs and those probabilities into the verdicts to emit (the emit model's
   P(evidence) when the decision is learned), and :func:`to_prediction` into a leaderboard prediction;
4. :func:`objective` scores predictions the way the decision is tuned: the mean of the two headline F1s.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

import numpy as np
import numpy.typing as npt

from sciverify.data.records import AbstractPrediction, Claim, DocId, Prediction
from sciverify.models.decision import (
    DecisionConfig,
    Verdict,
    blend_scores,
    decide,
    label_inputs,
    listed_sentences,
    read_sentences,
    reader_label,
    reader_sentences,
)
from sciverify.models.emit import EmitModel, emit_features

__all__ = [
    "NO_EVIDENCE",
    "CandidateOutputs",
    "ClaimOutputs",
    "emit_rows",
    "label_requests",
    "objective",
    "reader_probs",
    "relisted",
    "stored_label_probs",
    "to_prediction",
    "verdicts",
]

#: Label probabilities of a candidate the label model never read: certainly NOT_ENOUGH_INFO.
NO_EVIDENCE = np.array([0.0, 0.0, 1.0], dtype=np.float32)


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
        P(rationale) blended in when ``cfg`` uses it (:func:`sciverify.models.decision.blend_scores`)."""
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
        sentences it reads (:func:`sciverify.models.decision.reader_sentences`), NaN elsewhere. Stored
        outputs hold every sentence, so each ``reader_reads`` can be scored without rereading."""
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


def label_requests(
    scores: Sequence[npt.NDArray[np.floating]], cfg: DecisionConfig
) -> list[tuple[int, tuple[int, ...]]]:
    """The candidates (by position) the label model reads under ``cfg``, each with the sentences it reads."""
    return [(i, read_sentences(scores[i], cfg)) for i in label_inputs(scores, cfg)]


def stored_label_probs(
    candidates: Sequence[CandidateOutputs], cfg: DecisionConfig
) -> dict[int, npt.NDArray[np.float32]]:
    """:func:`label_requests` answered without running a model: from the reader's stance when the label
    source is the reader, else from each candidate's stored ``label_reads`` (a set never read counts as
    :data:`NO_EVIDENCE`)."""
    requests = label_requests([c.label_scores(cfg) for c in candidates], cfg)
    if cfg.label_source == "reader":
        return {i: reader_probs(candidates[i], sentences) for i, sentences in requests}
    return {i: candidates[i].label_reads.get(sentences, NO_EVIDENCE) for i, sentences in requests}


def reader_probs(candidate: CandidateOutputs, sentences: Sequence[int]) -> npt.NDArray[np.float32]:
    """The reader's label probabilities for one candidate reading ``sentences``."""
    if candidate.stance is None or candidate.rationale is None:
        return NO_EVIDENCE
    return reader_label(candidate.stance, candidate.rationale, sentences)


def emit_rows(
    candidates: Sequence[CandidateOutputs],
    label_probs: Mapping[int, npt.NDArray[np.floating]],
    cfg: DecisionConfig,
) -> npt.NDArray[np.float64]:
    """The emit model's feature rows of one claim's candidates. Shape: (candidates, features). A reader
    that only lists (``cfg.reader_lists_only``) is not heard: the rows are those without it."""
    cfg = cfg.emission()
    return emit_features(
        [c.retrieval for c in candidates],
        [c.decision_scores(cfg) for c in candidates],
        label_probs,
        cfg.sentence_threshold,
        [c.rationale for c in candidates] if cfg.uses_reader else None,
    )


def verdicts(
    candidates: Sequence[CandidateOutputs],
    label_probs: Mapping[int, npt.NDArray[np.floating]],
    cfg: DecisionConfig,
    *,
    emit: EmitModel | None = None,
    emit_probs: Sequence[float] | None = None,
) -> list[Verdict]:
    """The verdicts to emit for one claim, highest confidence first.

    Args:
        candidates: the claim's candidates in retrieval order.
        label_probs: the label model's probabilities for :func:`label_requests` (by candidate position).
        cfg: the decision rule's settings.
        emit: the emit model, which gives P(evidence) per candidate when ``cfg.confidence`` is "learned".
        emit_probs: those probabilities given directly instead (out-of-fold ones, in cross-fitting).
    """
    if emit_probs is None and emit is not None and cfg.confidence == "learned" and candidates:
        emit_probs = [float(p) for p in emit.predict(emit_rows(candidates, label_probs, cfg))]
    before = cfg.emission()
    chosen = decide([c.decision_scores(before) for c in candidates], dict(label_probs), before, emit_probs)
    if before is cfg:
        return chosen
    return [relisted(v, candidates[v.candidate], cfg) for v in chosen]


def relisted(verdict: Verdict, candidate: CandidateOutputs, cfg: DecisionConfig) -> Verdict:
    """``verdict`` listing the sentences the reader's blended scores choose (:func:`listed_sentences`), when
    the reader has read its abstract; as it was otherwise."""
    if candidate.rationale is None:
        return verdict
    scores = candidate.decision_scores(cfg)
    listed = tuple(listed_sentences(scores, cfg))
    return replace(verdict, sentences=listed, sentence_scores=tuple(float(scores[j]) for j in listed))


def to_prediction(
    claim_id: DocId,
    doc_ids: Sequence[str],
    chosen: Sequence[Verdict],
    p_label_correct: Mapping[int, float] | None = None,
) -> Prediction:
    """The leaderboard prediction of one claim from its verdicts (confidence rounded to 4 places), with
    P(label right | evidence) by candidate where it is known."""
    p_label = p_label_correct or {}
    evidence = {
        doc_ids[v.candidate]: AbstractPrediction(
            v.label, v.sentences, round(v.confidence, 4), p_label.get(v.candidate)
        )
        for v in chosen
    }
    return Prediction(claim_id, evidence)


def objective(claims: Sequence[Claim], predictions: Sequence[Prediction]) -> float:
    """The mean of abstract label+rationale F1 and sentence selection+label F1, the two headline figures
    of the SciFact leaderboard: what the decision settings are chosen to maximise."""
    from sciverify.scoring import score

    agg = score(claims, predictions).aggregate
    return (agg["abstract_rationalized"].f1 + agg["sentence_label"].f1) / 2.0
