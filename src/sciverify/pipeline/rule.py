"""The decision rule: from what the models said about a claim's candidate abstracts to what is emitted.

Everything that turns per-candidate model outputs into the emitted abstracts, their labels, their listed
sentences and the abstracts the evidence view shows lives here, with one configuration record
(:class:`DecisionConfig`, the ``[decision]`` table of ``pipeline.toml``). Serving
(:class:`sciverify.pipeline.verify.Verifier`), the cross-validation and the final fit
(:mod:`sciverify.training.cv`) all call it, so changing the rule is this module and its configuration.

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
  ``label_source = "reader"`` its stance, weighted by P(rationale), gives the label. With
  ``reader_lists_only`` it comes after the emission instead (:meth:`DecisionConfig.emission`) and reads
  only the abstracts emitted or shown, to choose the sentences they list: its features stay away from the
  emit model, which leaned on them in domain and abstained out of domain (docs/cross-validation.md).

The steps, in the order a claim passes them: :func:`label_requests`, :func:`stored_label_probs` (those
answered from stored outputs), :func:`emit_rows`, :func:`claim_verdicts` (with the reader's second pass),
:func:`shown_verdicts` (what the evidence view adds) and :func:`to_prediction`. The cross-validation's
settings are :func:`learned_decision` over :data:`LEARNED`.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any

import numpy as np
import numpy.typing as npt

from sciverify.data.records import AbstractPrediction, Claim, DocId, Label, Prediction
from sciverify.errors import ConfigError
from sciverify.models.emit import EmitModel, emit_features

__all__ = [
    "LABEL_READS", "LABEL_SOURCES", "LEARNED", "NO_EVIDENCE", "VERISCI_RULE", "CandidateOutputs",
    "ClaimOutputs", "DecisionConfig", "ReadCandidates", "Verdict", "blend_scores", "claim_verdicts",
    "confidence_of", "decide", "emit_rows", "label_inputs", "label_of", "label_requests", "learned_decision",
    "listed_sentences", "objective", "possible_reads", "read_sentences", "reader_label", "reader_probs",
    "reader_sentences", "relisted", "select_sentences", "shown_candidates", "shown_verdicts",
    "stored_label_probs", "to_prediction", "verdicts",
]

#: Where an abstract's label probabilities come from: the label model reading the selected sentences
#: together, or the reader's per-sentence stance over them.
LABEL_SOURCES = ("model", "reader")
#: The most sentences the label model reads per candidate in the learned decision (the best two above the
#: threshold, else the best one): stored label outputs cover every read of up to this many sentences.
LABEL_READS = 2
#: Label probabilities of a candidate the label model never read: certainly NOT_ENOUGH_INFO.
NO_EVIDENCE = np.array([0.0, 0.0, 1.0], dtype=np.float32)


@dataclass(frozen=True)
class DecisionConfig:
    """The rule's settings (the ``[decision]`` table of ``pipeline.toml``; see the module docstring).

    Attributes:
        sentence_threshold: a sentence is a rationale when its score is at least this.
        max_sentences: at most this many rationale sentences per abstract go to the label model.
        max_listed: at most this many are listed in the verdict (0: ``max_sentences``; else at least it).
        min_rationale_score: abstracts whose best sentence scores below this skip the label model.
        max_labelled: at most this many abstracts (best rationale first) go to the label model per claim.
        emit_threshold: emit an abstract when its confidence is at least this.
        rationale_power: exponent of the best rationale score in the confidence.
        rank_discount: confidence is multiplied by ``1 / (1 + rank_discount * retrieval_rank)``.
        max_emitted: at most this many abstracts per claim (highest confidence first).
        confidence: "heuristic" (the product above) or "learned" (the emit model's probability).
        reader_reads: sentences per candidate the reader reads, the selector's best first (0: no reader).
        reader_weight: weight of the reader's P(rationale) in a read sentence's score (the selector's
            score has the rest; an unread sentence keeps only its share of the selector's score).
        label_source: one of :data:`LABEL_SOURCES`.
        reader_lists_only: the reader only chooses the listed sentences of abstracts emitted without it
            (needs the label model as label source and a blend weight above 0).
    """

    sentence_threshold: float = 0.5
    max_sentences: int = 3
    min_rationale_score: float = 0.2
    max_labelled: int = 6
    emit_threshold: float = 0.5
    rationale_power: float = 0.5
    rank_discount: float = 0.0
    max_emitted: int = 5
    confidence: str = "heuristic"
    max_listed: int = 0
    reader_reads: int = 0
    reader_weight: float = 0.0
    label_source: str = "model"
    reader_lists_only: bool = False

    def __post_init__(self) -> None:
        if self.confidence not in ("heuristic", "learned"):
            raise ConfigError(
                f"decision.confidence must be 'heuristic' or 'learned', got {self.confidence!r}"
            )
        for name in ("sentence_threshold", "min_rationale_score", "emit_threshold"):
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0:
                raise ConfigError(f"decision.{name} must be in [0, 1], got {value}")
        if self.max_sentences < 1 or self.max_labelled < 1 or self.max_emitted < 1:
            raise ConfigError("decision.max_sentences, max_labelled and max_emitted must be >= 1")
        if self.max_listed and self.max_listed < self.max_sentences:
            raise ConfigError(
                f"decision.max_listed must be 0 or at least max_sentences ({self.max_sentences}), "
                f"got {self.max_listed}"
            )
        if self.rationale_power < 0 or self.rank_discount < 0:
            raise ConfigError("decision.rationale_power and rank_discount must be >= 0")
        if self.label_source not in LABEL_SOURCES:
            raise ConfigError(
                f"decision.label_source must be one of {LABEL_SOURCES}, got {self.label_source!r}"
            )
        if not 0.0 <= self.reader_weight <= 1.0 or self.reader_reads < 0:
            raise ConfigError("decision.reader_weight must be in [0, 1] and reader_reads >= 0")
        if (self.reader_weight > 0 or self.label_source == "reader") and self.reader_reads < 1:
            raise ConfigError("decision.reader_weight and label_source = 'reader' need reader_reads >= 1")
        if self.reader_lists_only and (self.label_source != "model" or self.reader_weight <= 0):
            raise ConfigError(
                "decision.reader_lists_only needs label_source = 'model' and reader_weight > 0 "
                "(a reader that only lists has nothing else to change)"
            )

    def emission(self) -> DecisionConfig:
        """The settings that decide which abstracts are emitted, with what label and confidence: these,
        or, when the reader only lists, these without the reader."""
        if not self.reader_lists_only:
            return self
        return replace(self, reader_reads=0, reader_weight=0.0, reader_lists_only=False)

    @property
    def uses_reader(self) -> bool:
        """Whether the reader runs: it reads whenever ``reader_reads`` > 0, since the emit model hears it
        (:data:`sciverify.models.emit.READER_EMIT_FEATURES`) even when it neither blends nor labels.
        When it only lists (``reader_lists_only``) it runs after the emission, on the emitted abstracts."""
        return self.reader_reads > 0

    @property
    def reads_before_emission(self) -> bool:
        """Whether the reader reads every candidate before the emission (it is heard, blends or labels)."""
        return self.uses_reader and not self.reader_lists_only

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> DecisionConfig:
        known = {f.name for f in fields(cls)}
        unknown = set(data) - known
        if unknown:
            raise ConfigError(f"unknown decision settings: {', '.join(sorted(unknown))}")
        return cls(**data)


#: VeriSci's decision rule (Wadden et al. 2020, sec. 5): every sentence scoring >= 0.5 is a rationale, an
#: abstract with no rationale is NOT_ENOUGH_INFO, otherwise the label model's argmax decides. Used for the
#: oracle-rationale ablation and the paper-style baseline.
VERISCI_RULE = DecisionConfig(
    sentence_threshold=0.5,
    max_sentences=64,
    min_rationale_score=0.5,
    max_labelled=64,
    emit_threshold=0.5,
    rationale_power=0.0,
    rank_discount=0.0,
    max_emitted=64,
)
#: The learned decision as the cross-validation fixes it before any fold is scored: the label model reads
#: at most :data:`LABEL_READS` sentences, a verdict lists up to three (the abstract metric reads three),
#: every candidate is labelled and the emit model alone decides. The grid's settings
#: (:func:`learned_decision`) and ``max_labelled`` = k complete it.
LEARNED = DecisionConfig(
    max_sentences=LABEL_READS,
    max_listed=3,
    min_rationale_score=0.0,
    rationale_power=0.0,
    confidence="learned",
)


def learned_decision(settings: Mapping[str, Any], k: int) -> DecisionConfig:
    """:data:`LEARNED` with the chosen ``settings`` (sentence and emit threshold, abstracts per claim and
    the reader's options; each read as its field's type) for ``k`` candidates per claim."""
    known = {f.name for f in fields(DecisionConfig)}
    unknown = set(settings) - known
    if unknown:
        raise ConfigError(f"unknown decision settings: {', '.join(sorted(unknown))}")
    typed = {name: type(getattr(LEARNED, name))(value) for name, value in settings.items()}
    return replace(LEARNED, max_labelled=k, **typed)


@dataclass(frozen=True)
class Verdict:
    """The decision for one candidate abstract (``candidate`` indexes the input list)."""

    candidate: int
    label: Label
    confidence: float
    sentences: tuple[int, ...]
    sentence_scores: tuple[float, ...]



def select_sentences(scores: npt.NDArray[np.floating], cfg: DecisionConfig) -> list[int]:
    """Indices of the rationale sentences, most confident first (empty when none clears the threshold)."""
    if len(scores) == 0:
        return []
    order = np.argsort(-np.asarray(scores), kind="stable")[: cfg.max_sentences]
    chosen = [int(i) for i in order if scores[i] >= cfg.sentence_threshold]
    if not chosen and cfg.confidence == "learned":
        return [int(order[0])]
    return chosen


def read_sentences(scores: npt.NDArray[np.floating], cfg: DecisionConfig) -> tuple[int, ...]:
    """The sentences the label model reads for a candidate, in abstract order (:func:`select_sentences`)."""
    return tuple(sorted(select_sentences(scores, cfg)))


def possible_reads(scores: npt.NDArray[np.floating], most: int) -> list[tuple[int, ...]]:
    """Every sentence set :func:`read_sentences` can return under any threshold when ``max_sentences`` is at
    most ``most``: the best one, the best two, ... (each in abstract order). Stored label outputs hold the
    label model's probabilities for exactly these, so every threshold can be scored without rerunning it."""
    if len(scores) == 0:
        return []
    order = [int(i) for i in np.argsort(-np.asarray(scores), kind="stable")[:most]]
    return [tuple(sorted(order[:n])) for n in range(1, len(order) + 1)]


def listed_sentences(scores: npt.NDArray[np.floating], cfg: DecisionConfig) -> list[int]:
    """The sentences a verdict lists, most confident first: :func:`select_sentences`, continued up to
    ``max_listed`` with the next sentences above the same threshold."""
    if cfg.max_listed <= cfg.max_sentences:
        return select_sentences(scores, cfg)
    return select_sentences(scores, replace(cfg, max_sentences=cfg.max_listed))


def reader_sentences(scores: npt.NDArray[np.floating], cfg: DecisionConfig) -> list[int]:
    """The sentences the reader reads in one candidate: the selector's ``reader_reads`` best (ties: the
    earlier sentence), in abstract order."""
    order = np.argsort(-np.asarray(scores), kind="stable")[: cfg.reader_reads]
    return sorted(int(i) for i in order)


def blend_scores(
    scores: npt.NDArray[np.floating], rationale: npt.NDArray[np.floating] | None, cfg: DecisionConfig
) -> npt.NDArray[np.float32]:
    """Sentence scores with the reader's P(rationale) blended in.

    ``rationale`` has one entry per sentence, NaN where the reader did not read; a read sentence scores
    ``w * P(rationale) + (1 - w) * selector score``, an unread one ``(1 - w) * selector score``.
    """
    base = np.asarray(scores, dtype=np.float32)
    if rationale is None or cfg.reader_weight <= 0:
        return base
    w = np.float32(cfg.reader_weight)
    r = np.asarray(rationale, dtype=np.float32)
    read = ~np.isnan(r)
    return np.asarray((1 - w) * base + w * np.where(read, r, 0.0), dtype=np.float32)



def label_of(label_probs: npt.NDArray[np.floating]) -> Label:
    """The label an abstract is given: SUPPORT or CONTRADICT, whichever is likelier (ties: SUPPORT)."""
    return Label.SUPPORT if float(label_probs[0]) >= float(label_probs[1]) else Label.CONTRADICT


def reader_label(
    stance: npt.NDArray[np.floating], rationale: npt.NDArray[np.floating], sentences: Sequence[int]
) -> npt.NDArray[np.float32]:
    """An abstract's label probabilities from the reader: the stance of ``sentences`` averaged, each
    weighted by its P(rationale); sentences the reader did not read are skipped, and with none read the
    abstract is NOT_ENOUGH_INFO."""
    idx = [i for i in sentences if 0 <= i < len(rationale) and not np.isnan(rationale[i])]
    if not idx:
        return np.asarray([0.0, 0.0, 1.0], dtype=np.float32)
    w = np.maximum(np.asarray(rationale, dtype=np.float64)[idx], 1e-6)
    p = (np.asarray(stance, dtype=np.float64)[idx] * w[:, None]).sum(0) / w.sum()
    return np.asarray(p, dtype=np.float32)


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
) -> list[Verdict]:
    """Verdicts to emit, highest confidence first.

    Args:
        scores: per candidate (in retrieval order), the rationale score of each sentence.
        label_probs: for the candidates chosen by :func:`label_inputs`, the label model's
            probabilities over SUPPORT, CONTRADICT, NOT_ENOUGH_INFO (given the selected sentences).
        cfg: thresholds.
        emit_probs: per candidate, the emit model's P(evidence); required in learned mode.
    """
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
        if conf < cfg.emit_threshold:
            continue
        listed = listed_sentences(scores[i], cfg)
        out.append(Verdict(i, label, conf, tuple(listed), tuple(float(scores[i][j]) for j in listed)))
    out.sort(key=lambda v: (-v.confidence, v.candidate))
    return out[: cfg.max_emitted]



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


#: The reader, run on some candidates of a claim (by position): the candidates with its outputs for the
#: sentences :func:`reader_sentences` picks in those, the others as they were.
ReadCandidates = Callable[[Sequence[CandidateOutputs], Collection[int]], list[CandidateOutputs]]


def claim_verdicts(
    candidates: Sequence[CandidateOutputs],
    label_probs: Mapping[int, npt.NDArray[np.floating]],
    cfg: DecisionConfig,
    emit_probs: Sequence[float] | None,
    *,
    read: ReadCandidates | None = None,
    shown: float | None = None,
) -> tuple[list[Verdict], list[CandidateOutputs]]:
    """One claim's verdicts and its candidates as the decision leaves them.

    When the reader only lists and ``read`` runs it live, it runs after the emission: on the abstracts
    emitted without it and, with ``shown`` (the evidence view's P(evidence) threshold), on every abstract
    the view shows, so each lists the sentences the reader chose. Without ``read`` the candidates already
    hold whatever the reader read (stored outputs, or a reader that read before the emission)."""
    outputs = list(candidates)
    if cfg.reader_lists_only and read is not None:
        first = verdicts(outputs, label_probs, cfg.emission(), emit_probs=emit_probs)
        wanted = {v.candidate for v in first}
        if shown is not None and emit_probs is not None:
            wanted |= set(shown_candidates(label_probs, emit_probs, shown))
        if wanted:
            outputs = read(outputs, wanted)
    return verdicts(outputs, label_probs, cfg, emit_probs=emit_probs), outputs



def shown_candidates(
    label_probs: Mapping[int, npt.NDArray[np.floating]], emit_probs: Sequence[float], threshold: float
) -> list[int]:
    """The labelled candidates the evidence view shows: P(evidence) at least ``threshold``, in the order
    of ``label_probs``."""
    return [i for i in label_probs if emit_probs[i] >= threshold]


def shown_verdicts(
    chosen: Sequence[Verdict],
    label_probs: Mapping[int, npt.NDArray[np.floating]],
    scores: Sequence[npt.NDArray[np.floating]],
    emit_probs: Sequence[float],
    cfg: DecisionConfig,
    threshold: float,
) -> list[Verdict]:
    """What the evidence view adds to the emitted verdicts ``chosen``: every other labelled candidate with
    P(evidence) at least ``threshold`` and a sentence to list, as a verdict whose confidence is its
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
        out.append(Verdict(i, label_of(label_probs[i]), float(emit_probs[i]), tuple(listed), listed_scores))
    return out



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
