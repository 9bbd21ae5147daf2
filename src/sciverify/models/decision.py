"""Turn sentence scores and label probabilities into the verdicts we emit: which abstracts, which sentences.

Two metrics pull in different directions. The abstract metric reads at most three listed sentences
and forgives extras; the sentence metric counts every listed sentence. So each abstract lists the
top-scoring sentences above ``sentence_threshold`` (at most ``max_sentences``, most confident
first), and an abstract is emitted only when its *confidence* clears ``emit_threshold``. Confidence
multiplies the label model's belief that there is evidence at all (1 - P(NEI), as VeriSci's label
stage does), the best rationale score raised to ``rationale_power`` (how sure we are the evidence
exists in this abstract), and a retrieval-rank discount.

What the label model reads and what is listed may differ: the label model was trained on gold rationales
(mostly one or two sentences) and reads a third sentence worse (docs/experiments-rationale.md §10), while the
abstract metric forgives a third listed sentence and rewards it whenever it completes a gold rationale. So
``max_listed`` may list more sentences (above the same threshold) than the ``max_sentences`` the label model
reads; the first ``max_sentences`` listed are always the ones it read.

With ``confidence = "learned"`` (the shipped decision) the confidence is instead the learned emit model's
P(evidence) (:mod:`sciverify.models.emit`), computed by the caller from every top-k candidate: all of them
are labelled, and a candidate with no sentence above the threshold is labelled (and, if emitted, listed)
with its single best sentence. The learned settings are chosen by the cross-fitted protocol
(:mod:`sciverify.training.cv`), which scores every setting through the same functions as serving
(:mod:`sciverify.pipeline.candidates`).

With a per-sentence reader (:mod:`sciverify.models.reader`) the reader reads the ``reader_reads`` sentences
the selector ranks best in each candidate; its P(rationale) is blended into their scores with weight
``reader_weight`` (:func:`blend_scores`: every later step reads the blended scores), and with
``label_source = "reader"`` the abstract's label probabilities are its stance over the sentences read for
the label, each weighted by its P(rationale) (:func:`reader_label`), in place of the label model's.
With ``reader_lists_only`` the reader comes after the emission instead: which abstracts are emitted, with
what label and confidence, is decided exactly as without it (:meth:`DecisionConfig.emission`), and the
reader reads the emitted abstracts only, its blended scores choosing which sentences they list. That keeps
the reader's features away from the emit model, which learns to lean on them in the domain it was
trained in and then abstains where the reader is unsure (docs/cross-validation.md), and it costs a few
reads per claim rather than a few per candidate.

This module is the decision rule, defined once: which sentences are read and listed
(:func:`select_sentences`, :func:`read_sentences`, :func:`listed_sentences`), which candidates are
labelled (:func:`label_inputs`), what the reader reads and adds (:func:`reader_sentences`,
:func:`blend_scores`, :func:`reader_label`), and what is emitted (:func:`decide`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, fields, replace
from typing import Any

import numpy as np
import numpy.typing as npt

from sciverify.data.records import Label
from sciverify.errors import ConfigError

__all__ = [
    "LABEL_SOURCES",
    "VERISCI_RULE",
    "DecisionConfig",
    "Verdict",
    "confidence_of",
    "blend_scores",
    "decide",
    "label_inputs",
    "listed_sentences",
    "possible_reads",
    "read_sentences",
    "reader_label",
    "reader_sentences",
    "select_sentences",
]

#: Where an abstract's label probabilities come from: the label model reading the selected sentences
#: together, or the reader's per-sentence stance over them.
LABEL_SOURCES = ("model", "reader")


@dataclass(frozen=True)
class DecisionConfig:
    """Thresholds of the emit decision (see the module docstring).

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

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> DecisionConfig:
        known = {f.name for f in fields(cls)}
        unknown = set(data) - known
        if unknown:
            raise ConfigError(f"unknown decision settings: {', '.join(sorted(unknown))}")
        return cls(**data)


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


def listed_sentences(scores: npt.NDArray[np.floating], cfg: DecisionConfig) -> list[int]:
    """The sentences a verdict lists, most confident first: :func:`select_sentences`, continued up to
    ``max_listed`` with the next sentences above the same threshold."""
    if cfg.max_listed <= cfg.max_sentences:
        return select_sentences(scores, cfg)
    return select_sentences(scores, replace(cfg, max_sentences=cfg.max_listed))


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
    """The emitted label (SUPPORT or CONTRADICT, whichever is likelier) and its confidence in [0, 1]."""
    p_support, p_contradict, p_nei = (float(x) for x in label_probs[:3])
    label = Label.SUPPORT if p_support >= p_contradict else Label.CONTRADICT
    evidence = 1.0 - p_nei
    conf = evidence * (max(best_score, 0.0) ** cfg.rationale_power) / (1.0 + cfg.rank_discount * rank)
    return label, float(min(max(conf, 0.0), 1.0))


def decide(
    scores: Sequence[npt.NDArray[np.floating]],
    label_probs: dict[int, npt.NDArray[np.floating]],
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
