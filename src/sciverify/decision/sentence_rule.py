"""Sentence-level steps of the decision: which sentences are read, listed and blended, and the label
an abstract is given from probabilities (:mod:`sciverify.decision.rule` composes them)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np
import numpy.typing as npt

from sciverify.data.records import Label
from sciverify.decision.settings import DecisionConfig

__all__ = [
    "blend_scores",
    "label_of",
    "listed_sentences",
    "possible_reads",
    "read_sentences",
    "reader_label",
    "reader_sentences",
    "select_sentences",
]


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
    """The sentences a pick lists, most confident first: :func:`select_sentences`, continued up to
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
