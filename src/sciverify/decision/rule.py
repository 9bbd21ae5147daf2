"""The decision rule: from what the models said about a claim's candidate abstracts to what is emitted.

Everything that turns per-candidate model outputs into the emitted abstracts, their labels, their listed
sentences and the abstracts the evidence view shows lives in :mod:`sciverify.decision`, with one settings
record (:class:`~sciverify.decision.settings.DecisionConfig`, shipped as ``decision/decision.toml``).
Serving (:class:`sciverify.pipeline.verify.Verifier`), the cross-validation and the final fit
(:mod:`sciverify.training.cv`) all call it, so changing the rule is this package and its settings.

Why the rule looks the way it does:

* The abstract metric reads at most three listed sentences and forgives extras; the sentence metric
  counts every one. So an abstract lists its best sentences above ``sentence_threshold`` and is emitted
  only when its confidence clears ``emit_threshold``.
* The label model was trained on gold rationales (mostly one or two sentences) and reads a third sentence
  worse, while a third listed sentence can complete a gold rationale (docs/experiments-rationale.md); so
  ``max_listed`` may list more sentences than the ``max_sentences`` it reads, those it read first.
* The confidence is the hand-made product (1 - P(NEI), as VeriSci's label stage, times the best rationale
  score to ``rationale_power``, times a rank discount) or, in the shipped ``"learned"`` mode, the emit
  model's P(evidence) over every top-k candidate (:mod:`sciverify.models.emit`): all are labelled, one
  with no sentence above the threshold by its best one.
* A per-sentence reader reads the ``reader_reads`` sentences the selector ranks best; its P(rationale) is
  blended into their scores with ``reader_weight`` (every later step reads the blended scores), and with
  ``label_source = "reader"`` its stance, weighted by P(rationale), gives the label (with ``"both"``, that
  stance over the label model's sentences averaged with the label model's answer). With
  ``reader_lists_only`` it comes after the emission instead (:meth:`DecisionConfig.emission`) and reads
  only the abstracts emitted or shown, to choose the sentences they list: its features stay away from the
  emit model, which leaned on them in domain and abstained out of domain (docs/cross-validation.md).

A claim passes it in one direction. The decision first says what each model is to read
(:func:`label_requests` for the label model, :func:`emit_probabilities` runs the emit model, and
:func:`listing_reads` says which abstracts a reader that only lists reads); then, with every model's
answer in hand, :func:`decide_claim` decides once: the emitted :class:`Pick` s and those the evidence view
adds. :func:`to_prediction` writes the leaderboard prediction. The cross-validation reads stored outputs
instead (:func:`stored_label_probs`, :func:`emit_rows`, :func:`picks`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np
import numpy.typing as npt

from sciverify.data.records import AbstractPrediction, Claim, DocId, Label, Prediction
from sciverify.decision.candidates import CandidateOutputs
from sciverify.decision.sentence_rule import (
    label_of,
    listed_sentences,
    read_sentences,
    reader_label,
    select_sentences,
)
from sciverify.decision.settings import NO_EVIDENCE, DecisionConfig
from sciverify.errors import ConfigError
from sciverify.models.emit import EmitModel, emit_features

__all__ = [
    "ClaimDecision",
    "Pick",
    "confidence_of",
    "decide",
    "decide_claim",
    "emission_cut",
    "emit_probabilities",
    "emit_rows",
    "headline",
    "label_inputs",
    "label_requests",
    "listing_reads",
    "objective",
    "picks",
    "ranked",
    "ranked_picks",
    "reader_probs",
    "relisted",
    "shown_candidates",
    "shown_picks",
    "stored_label_probs",
    "to_prediction",
    "with_reader",
]


@dataclass(frozen=True)
class Pick:
    """One candidate abstract the decision emits or shows, with its label, confidence and listed sentences
    (``candidate`` indexes the claim's candidates). Not a verdict: the overall verdict over the shown
    abstracts is :mod:`sciverify.decision.verdict`'s."""

    candidate: int
    label: Label
    confidence: float
    sentences: tuple[int, ...]
    sentence_scores: tuple[float, ...]
    #: The sentences whose reading gave ``label`` (abstract order; empty where no model read them, as with
    #: the LLM judge). A reader that lists may list others; the evidence view shows these, so the reason
    #: shown is the reason used.
    read: tuple[int, ...] = ()


def label_inputs(scores: Sequence[npt.NDArray[np.floating]], cfg: DecisionConfig) -> list[int]:
    """Which candidates go to the label model: a rationale exists, best ``max_labelled`` by top score.

    In learned mode every candidate with sentences (the first ``max_labelled``) is labelled: the emit
    model, not a threshold, decides which ones count.
    """
    if cfg.confidence == "learned":
        return [i for i, s in enumerate(scores) if len(s)][: cfg.max_labelled]
    eligible = [
        (float(np.max(s)), i)
        for i, s in enumerate(scores)
        if len(s) and float(np.max(s)) >= max(cfg.min_rationale_score, 0.0) and select_sentences(s, cfg)
    ]
    eligible.sort(key=lambda t: (-t[0], t[1]))
    return sorted(i for _, i in eligible[: cfg.max_labelled])


def confidence_of(
    label_probs: npt.NDArray[np.floating], best_score: float, rank: int, cfg: DecisionConfig
) -> tuple[Label, float]:
    """The emitted label (:func:`label_of`) and the heuristic confidence in [0, 1]."""
    p_nei = float(label_probs[2])
    evidence = 1.0 - p_nei
    conf = evidence * (max(best_score, 0.0) ** cfg.rationale_power) / (1.0 + cfg.rank_discount * rank)
    return label_of(label_probs), float(min(max(conf, 0.0), 1.0))


def decide(
    scores: Sequence[npt.NDArray[np.floating]],
    label_probs: Mapping[int, npt.NDArray[np.floating]],
    cfg: DecisionConfig,
    emit_probs: Sequence[float] | None = None,
) -> list[Pick]:
    """The picks to emit, highest confidence first: :func:`ranked` cut by :func:`emission_cut`.

    Args:
        scores: per candidate (in retrieval order), the rationale score of each sentence.
        label_probs: for the candidates chosen by :func:`label_inputs`, the label model's
            probabilities over SUPPORT, CONTRADICT, NOT_ENOUGH_INFO (given the selected sentences).
        cfg: thresholds.
        emit_probs: per candidate, the emit model's P(evidence); required in learned mode.
    """
    return emission_cut(ranked(scores, label_probs, cfg, emit_probs), cfg)


def ranked(
    scores: Sequence[npt.NDArray[np.floating]],
    label_probs: Mapping[int, npt.NDArray[np.floating]],
    cfg: DecisionConfig,
    emit_probs: Sequence[float] | None = None,
) -> list[Pick]:
    """Every labelled candidate with a selected sentence, as a pick, highest confidence first: what the
    emission cuts. Nothing here depends on the emit threshold or the cap, so a grid over those two ranks
    once (:func:`sciverify.training.cv.decision.choose_decision`)."""
    if cfg.confidence == "learned" and emit_probs is None:
        raise ConfigError("decision.confidence = 'learned' needs the emit model's probabilities")
    out = []
    for i, probs in label_probs.items():
        chosen = select_sentences(scores[i], cfg)
        if not chosen:
            continue
        label, conf = confidence_of(np.asarray(probs), float(scores[i][chosen[0]]), i, cfg)
        if emit_probs is not None and cfg.confidence == "learned":
            conf = float(emit_probs[i])
        listed = listed_sentences(scores[i], cfg)
        out.append(Pick(i, label, conf, tuple(listed), tuple(float(scores[i][j]) for j in listed)))
    out.sort(key=lambda v: (-v.confidence, v.candidate))
    return out


def emission_cut(ranked_picks: Sequence[Pick], cfg: DecisionConfig) -> list[Pick]:
    """The picks emitted out of ``ranked_picks`` (highest confidence first): those whose confidence
    reaches the emit threshold, at most ``max_emitted`` of them. The one place the two settings act."""
    return [v for v in ranked_picks if v.confidence >= cfg.emit_threshold][: cfg.max_emitted]


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
    :data:`~sciverify.decision.settings.NO_EVIDENCE`)."""
    requests = label_requests([c.label_scores(cfg) for c in candidates], cfg)
    if cfg.label_source == "reader":
        return {i: reader_probs(candidates[i], sentences) for i, sentences in requests}
    model = {i: candidates[i].label_reads.get(sentences, NO_EVIDENCE) for i, sentences in requests}
    return with_reader(candidates, model, cfg)


def with_reader(
    candidates: Sequence[CandidateOutputs],
    model_probs: Mapping[int, npt.NDArray[np.floating]],
    cfg: DecisionConfig,
) -> dict[int, npt.NDArray[np.float32]]:
    """The label probabilities the decision reads, given the label model's: those, or with ``label_source
    = "both"`` their mean with the reader's stance over the same sentences (the label model's). One rule
    for the folds' stored outputs and for serving, which runs the label model first."""
    if cfg.label_source != "both":
        return {i: np.asarray(p, dtype=np.float32) for i, p in model_probs.items()}
    requests = dict(label_requests([c.label_scores(cfg) for c in candidates], cfg))
    out = {}
    for i, p in model_probs.items():
        mean = (np.asarray(p, dtype=np.float64) + reader_probs(candidates[i], requests[i])) / 2.0
        out[i] = np.asarray(mean, dtype=np.float32)
    return out


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


def emit_probabilities(
    candidates: Sequence[CandidateOutputs],
    label_probs: Mapping[int, npt.NDArray[np.floating]],
    cfg: DecisionConfig,
    emit: EmitModel | None,
) -> list[float] | None:
    """The emit model's P(evidence) of each candidate, when ``cfg`` decides by it (None otherwise)."""
    if emit is None or cfg.confidence != "learned" or not candidates:
        return None
    return [float(p) for p in emit.predict(emit_rows(candidates, label_probs, cfg))]


def picks(
    candidates: Sequence[CandidateOutputs],
    label_probs: Mapping[int, npt.NDArray[np.floating]],
    cfg: DecisionConfig,
    *,
    emit: EmitModel | None = None,
    emit_probs: Sequence[float] | None = None,
) -> list[Pick]:
    """The picks to emit for one claim, highest confidence first.

    Args:
        candidates: the claim's candidates in retrieval order, holding whatever the reader read.
        label_probs: the label model's probabilities for :func:`label_requests` (by candidate position).
        cfg: the decision rule's settings.
        emit: the emit model, which gives P(evidence) per candidate when ``cfg.confidence`` is "learned".
        emit_probs: those probabilities given directly instead (out-of-fold ones, in cross-fitting).
    """
    if emit_probs is None:
        emit_probs = emit_probabilities(candidates, label_probs, cfg, emit)
    return emission_cut(ranked_picks(candidates, label_probs, cfg, emit_probs=emit_probs), cfg)


def ranked_picks(
    candidates: Sequence[CandidateOutputs],
    label_probs: Mapping[int, npt.NDArray[np.floating]],
    cfg: DecisionConfig,
    *,
    emit_probs: Sequence[float] | None,
) -> list[Pick]:
    """:func:`picks` before the emission cut (:func:`emission_cut`): every candidate :func:`ranked`
    keeps, listing the sentences the reader's blended scores choose where it lists."""
    before = cfg.emission()
    order = ranked([c.decision_scores(before) for c in candidates], label_probs, before, emit_probs)
    if before is cfg:
        return order
    return [relisted(v, candidates[v.candidate], cfg) for v in order]


def relisted(pick: Pick, candidate: CandidateOutputs, cfg: DecisionConfig) -> Pick:
    """``pick`` listing the sentences the reader's blended scores choose (:func:`listed_sentences`), when
    the reader has read its abstract; as it was otherwise."""
    if candidate.rationale is None:
        return pick
    scores = candidate.decision_scores(cfg)
    listed = tuple(listed_sentences(scores, cfg))
    return replace(pick, sentences=listed, sentence_scores=tuple(float(scores[j]) for j in listed))


def listing_reads(
    candidates: Sequence[CandidateOutputs],
    label_probs: Mapping[int, npt.NDArray[np.floating]],
    cfg: DecisionConfig,
    emit_probs: Sequence[float] | None,
    shown: float | None = None,
) -> list[int]:
    """The candidates (by position) a reader that only lists reads after the emission: those emitted
    without it and, with ``shown`` (the evidence view's P(evidence) threshold), every one the view shows,
    so each lists the sentences the reader chose. Empty when the reader does not only list."""
    if not cfg.reader_lists_only:
        return []
    wanted = {v.candidate for v in picks(candidates, label_probs, cfg.emission(), emit_probs=emit_probs)}
    if shown is not None and emit_probs is not None:
        wanted |= set(shown_candidates(label_probs, emit_probs, shown))
    return sorted(wanted)


@dataclass(frozen=True)
class ClaimDecision:
    """What the decision made of one claim: the emitted picks (highest confidence first), the picks the
    evidence view adds (``shown``; empty unless asked for) and the sentence scores it read per candidate
    (the selector's, blended with the reader's where it read)."""

    emitted: list[Pick]
    shown: list[Pick]
    scores: list[npt.NDArray[np.float32]]


def decide_claim(
    candidates: Sequence[CandidateOutputs],
    label_probs: Mapping[int, npt.NDArray[np.floating]],
    cfg: DecisionConfig,
    emit_probs: Sequence[float] | None,
    shown: float | None = None,
) -> ClaimDecision:
    """The decision for one claim, once every model has answered what the decision asked of it
    (``candidates`` hold the reader's outputs, ``label_probs`` the label model's, ``emit_probs`` the emit
    model's); ``shown``: the evidence view's P(evidence) threshold, when the caller shows more than what
    is emitted."""
    emitted = picks(candidates, label_probs, cfg, emit_probs=emit_probs)
    scores = [c.decision_scores(cfg) for c in candidates]
    extra: list[Pick] = []
    if shown is not None and emit_probs is not None:
        extra = shown_picks(emitted, label_probs, scores, emit_probs, cfg, shown)

    def with_read(p: Pick) -> Pick:
        return replace(p, read=read_sentences(candidates[p.candidate].label_scores(cfg), cfg))

    return ClaimDecision([with_read(p) for p in emitted], [with_read(p) for p in extra], scores)


def shown_candidates(
    label_probs: Mapping[int, npt.NDArray[np.floating]], emit_probs: Sequence[float], threshold: float
) -> list[int]:
    """The labelled candidates the evidence view shows: P(evidence) at least ``threshold``, in the order
    of ``label_probs``."""
    return [i for i in label_probs if emit_probs[i] >= threshold]


def shown_picks(
    chosen: Sequence[Pick],
    label_probs: Mapping[int, npt.NDArray[np.floating]],
    scores: Sequence[npt.NDArray[np.floating]],
    emit_probs: Sequence[float],
    cfg: DecisionConfig,
    threshold: float,
) -> list[Pick]:
    """What the evidence view adds to the emitted picks ``chosen``: every other labelled candidate with
    P(evidence) at least ``threshold`` and a sentence to list, as a pick whose confidence is its
    P(evidence), its label and listing as an emitted one's would be (``scores``: the decision's)."""
    emitted = {v.candidate for v in chosen}
    out = []
    for i in shown_candidates(label_probs, emit_probs, threshold):
        if i in emitted:
            continue
        listed = listed_sentences(scores[i], cfg)
        if not listed:
            continue
        listed_scores = tuple(float(scores[i][j]) for j in listed)
        out.append(Pick(i, label_of(label_probs[i]), float(emit_probs[i]), tuple(listed), listed_scores))
    return out


def to_prediction(
    claim_id: DocId,
    doc_ids: Sequence[str],
    chosen: Sequence[Pick],
    p_label_correct: Mapping[int, float] | None = None,
) -> Prediction:
    """The leaderboard prediction of one claim from its emitted picks (confidence rounded to 4 places),
    with P(label right | evidence) by candidate where it is known."""
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

    return headline(score(claims, predictions).counts)


def headline(counts: npt.NDArray[np.integer]) -> float:
    """:func:`objective` from the scorer's per-claim counts (rows of ``COUNT_COLUMNS``): the micro
    figures are functions of their sums, so a grid may judge each claim's possible outputs once."""
    from sciverify.scoring import micro_metrics

    agg = micro_metrics(counts)
    return (agg["abstract_rationalized"].f1 + agg["sentence_label"].f1) / 2.0
