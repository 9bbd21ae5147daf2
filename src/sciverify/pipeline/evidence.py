"""The evidence view: every abstract the models find relevant, for and against, and an overall verdict.

The leaderboard decision (``sciverify predict``, ``pipeline.toml``) is tuned for the SciFact metric: it
emits at most one abstract per claim, because on the folds each extra abstract cost more precision than
it gained recall. A person checking a claim wants something else: every paper that bears on it, both
sides when the literature disputes it, and how much to trust each. So ``verify``, the page and
``/api/verify`` show the *evidence view* of the same computation:

* **Which abstracts.** Every judged candidate (the top ``k`` retrieved) whose P(evidence) (the emit
  model) is at least :data:`SHOW_THRESHOLD` = 0.3, plus the leaderboard pick if it were below (it never
  is with the shipped settings): more recall than the leaderboard decision, at a lower share of gold
  evidence (docs/evidence.md has the out-of-fold figures and the command that makes them). Which
  abstracts are shown, with what label and sentences, is the decision rule's
  (:func:`sciverify.decision.rule.shown_picks`).
* **Grouped and ranked.** SUPPORT and CONTRADICT (refuting) groups, each by P(evidence), highest first,
  each abstract with its rationale sentences (the same listing rule as the leaderboard decision).
* **Two numbers**, both fitted out of fold: ``p_evidence``, P(this abstract is evidence), and
  ``p_label_correct``, P(its SUPPORT/CONTRADICT label is right, given it is evidence)
  (:mod:`sciverify.models.calibration`).
* **An overall verdict** that weighs the papers: :data:`sciverify.decision.verdict.WEIGHING` says how
  (:mod:`sciverify.decision.verdict`); *not enough evidence* when nothing is shown.

Every abstract of the leaderboard decision is in the view and marked ``in_prediction``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from sciverify.data.records import (
    DocId,
    Label,
    PaperMeta,
    RationaleSentence,
    VerifiedAbstract,
)
from sciverify.decision.verdict import Overall, sides, weigh
from sciverify.pipeline.study import display_title, study_facts

if TYPE_CHECKING:
    from sciverify.decision.rule import Pick
    from sciverify.pipeline.judged import EvidenceSource, JudgedClaim

__all__ = [
    "RELATED",
    "SEMANTIC_SCHOLAR",
    "SHOW_THRESHOLD",
    "Overall",
    "evidence_view",
    "group_evidence",
    "is_scifact_index",
    "label_correct_probs",
    "overall_verdict",
    "paper_link",
    "related_papers",
    "shown_rationale",
]

#: An abstract is shown when P(evidence) is at least this (docs/evidence.md has the out-of-fold table
#: this was read from: the threshold where about 60 % of what is shown is gold evidence).
SHOW_THRESHOLD = 0.3

#: At most this many candidates below :data:`SHOW_THRESHOLD` are listed apart, "related, not evidence".
RELATED = 3

#: SciFact's doc ids are S2ORC corpus ids (Lo et al. 2020), which Semantic Scholar resolves.
SEMANTIC_SCHOLAR = "https://api.semanticscholar.org/CorpusID:{}"


def overall_verdict(results: Sequence[VerifiedAbstract]) -> Overall:
    """Supported, refuted, conflicting or not enough evidence: the papers weighed by
    :func:`sciverify.decision.verdict.weigh` (its ``why`` says on what)."""
    return weigh(results).verdict


def group_evidence(
    results: Sequence[VerifiedAbstract],
) -> tuple[list[VerifiedAbstract], list[VerifiedAbstract], list[VerifiedAbstract]]:
    """(supporting, refuting, direction unclear), each in the order given (the view is already ranked):
    :func:`sciverify.decision.verdict.sides`."""
    return sides(results)


def related_papers(results: Sequence[VerifiedAbstract]) -> list[VerifiedAbstract]:
    """The papers listed apart, "related, not evidence": found, but below the evidence threshold."""
    return [r for r in results if Label(r.label) is Label.NOT_ENOUGH_INFO]


def is_scifact_index(index: Any) -> bool:
    """Whether ``index`` was built from the official SciFact corpus (its doc ids are S2ORC ids)."""
    from sciverify.data.datasets import OFFICIAL_FILES

    corpus = (getattr(index, "manifest", None) or {}).get("corpus") or {}
    return bool(corpus.get("sha256")) and corpus.get("sha256") == OFFICIAL_FILES["corpus.jsonl"]


def paper_link(doc_id: DocId, meta: PaperMeta | None, scifact: bool) -> str:
    """An address of the paper: the corpus's own (URL, DOI, PubMed), else for the SciFact corpus its
    Semantic Scholar page, else ''."""
    if meta is not None and meta.link():
        return meta.link()
    if scifact and (isinstance(doc_id, int) or str(doc_id).isdigit()):
        return SEMANTIC_SCHOLAR.format(int(doc_id))
    return ""


def label_correct_probs(
    verifier: EvidenceSource, judged: JudgedClaim, candidates: Sequence[int]
) -> dict[int, float]:
    """P(label right | evidence) of the given candidates, by candidate (none without a calibrator or
    label probabilities)."""
    calibrator = verifier.label_calibrator
    probs = judged.probs or {}
    idx = [i for i in candidates if i in probs]
    if calibrator is None or not idx:
        return {}
    values = calibrator.predict([probs[i] for i in idx])
    return {i: round(float(v), 4) for i, v in zip(idx, values, strict=True)}


def shown_rationale(pick: Pick, scores: npt.NDArray[np.floating] | None) -> list[tuple[int, float]]:
    """The sentences a shown paper's card gives as its reason, best first, each with its score: the ones
    its label was read from (``pick.read``), so the side shown is the label model's reading of the
    sentences shown; the pick's listing where no model read any (the LLM judge)."""
    if not pick.read or scores is None:
        return list(zip(pick.sentences, pick.sentence_scores, strict=True))
    return sorted(((j, float(scores[j])) for j in pick.read), key=lambda t: (-t[1], t[0]))


def evidence_view(verifier: EvidenceSource, judged: JudgedClaim) -> list[VerifiedAbstract]:
    """The shown abstracts of one judged claim: the leaderboard's picks and those the decision adds for
    the view (P(evidence) at least :data:`SHOW_THRESHOLD`), supporting first, each group by P(evidence);
    then up to :data:`RELATED` candidates below the threshold, as NOT_ENOUGH_INFO records with no
    rationale ("related, not evidence": never under a side, and weighing nothing).

    ``judged`` carries the candidates (``hits``), the emitted ``picks`` and the ``shown`` ones, the label
    ``probs`` and ``emit_probs``. Without emit probabilities (the LLM judge, the heuristic decision) the
    view is the emitted picks alone. Each card's rationale is :func:`shown_rationale`; ``listed`` keeps
    what the leaderboard prediction lists when that differs.
    """
    emit = judged.emit_probs
    chosen: list[tuple[Pick, bool]] = [(v, True) for v in judged.picks]
    chosen.extend((v, False) for v in judged.shown)
    p_label = label_correct_probs(verifier, judged, [v.candidate for v, _ in chosen])
    scifact = is_scifact_index(verifier.index)
    decision_scores = judged.scores
    out = []
    for v, in_prediction in chosen:
        hit = judged.hits[v.candidate]
        sentences = verifier.index.sentences(hit.row)
        meta = verifier.index.meta(hit.row)
        title = verifier.index.title(hit.row)
        shown = shown_rationale(v, decision_scores[v.candidate] if decision_scores is not None else None)
        out.append(
            VerifiedAbstract(
                doc_id=hit.doc_id,
                title=display_title(title, sentences),
                label=v.label,
                confidence=round(v.confidence, 4),
                rationale=tuple(RationaleSentence(i, sentences[i], round(s, 4)) for i, s in shown),
                retrieval_score=float(hit.score),
                meta=meta,
                p_evidence=round(float(emit[v.candidate]), 4) if emit is not None else None,
                p_label_correct=p_label.get(v.candidate),
                in_prediction=in_prediction,
                link=paper_link(hit.doc_id, meta, scifact),
                study=study_facts(title, sentences, meta),
                listed=v.sentences if [i for i, _ in shown] != list(v.sentences) else (),
            )
        )
    out.sort(key=lambda r: (Label(r.label) is not Label.SUPPORT, -(r.p_evidence or r.confidence)))
    if emit is not None:
        taken = {v.candidate for v, _ in chosen}
        below = sorted(
            (i for i in range(len(judged.hits)) if i not in taken and float(emit[i]) < SHOW_THRESHOLD),
            key=lambda i: (-float(emit[i]), i),
        )[:RELATED]
        for i in below:
            hit = judged.hits[i]
            sentences = verifier.index.sentences(hit.row)
            meta = verifier.index.meta(hit.row)
            out.append(
                VerifiedAbstract(
                    doc_id=hit.doc_id,
                    title=display_title(verifier.index.title(hit.row), sentences),
                    label=Label.NOT_ENOUGH_INFO,
                    confidence=round(float(emit[i]), 4),
                    rationale=(),
                    retrieval_score=float(hit.score),
                    meta=meta,
                    p_evidence=round(float(emit[i]), 4),
                    in_prediction=False,
                    link=paper_link(hit.doc_id, meta, scifact),
                )
            )
    return out
