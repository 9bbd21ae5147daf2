"""The decision layer, cross-fitted over out-of-fold model outputs: the emit model and the decision settings.

For each fold, the emit model (:func:`sciverify.models.emit.fit_emit`) is fitted and the settings of a
grid are chosen on the other folds only (:func:`choose_decision`, itself scoring each setting by an inner
cross-validation on the same folds); the fold's claims are then predicted with that choice
(:func:`cross_fit_decision`). The grid is the decision's (:mod:`sciverify.decision.grid`). Every
prediction goes through :mod:`sciverify.decision.rule`, the path serving takes, so what is estimated here
is what ships.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from sciverify.data.records import AbstractPrediction, Prediction
from sciverify.decision.candidates import ClaimOutputs
from sciverify.decision.grid import FIXED_DECISION
from sciverify.decision.rule import (
    Pick,
    emission_cut,
    emit_rows,
    headline,
    picks,
    ranked_picks,
    stored_label_probs,
    to_prediction,
)
from sciverify.decision.sentence_rule import label_of, listed_sentences
from sciverify.decision.settings import DecisionConfig, learned_decision
from sciverify.errors import ConfigError
from sciverify.models.emit import EmitModel, fit_emit
from sciverify.scoring.counts import COUNT_COLUMNS, entries_from_prediction, judge_claim

__all__ = [
    "DecisionChoice",
    "ReadSetting",
    "choose_decision",
    "cross_fit_decision",
    "fit_read_setting",
    "oracle_predictions",
]

@dataclass(frozen=True)
class DecisionChoice:
    """A decision setting with its emit model; ``objective`` is what chose it (on the fitting claims)."""

    settings: dict[str, Any]
    emit: EmitModel
    objective: float

    def config(self, k: int) -> DecisionConfig:
        return learned_decision(self.settings, k)


@dataclass(frozen=True)
class _Reads:
    """What the label model read under one sentence threshold, and the emit features that follow."""

    probs: list[dict[int, npt.NDArray[np.float32]]]  # per claim, by candidate
    x: npt.NDArray[np.float64]  # emit rows of every candidate of every claim
    y: npt.NDArray[np.int64]  # 1 where the candidate is gold evidence
    folds: npt.NDArray[np.int64]  # the fold of each row's claim
    spans: list[tuple[int, int]]  # each claim's rows

    def per_claim(self, p: npt.NDArray[np.float64]) -> list[list[float]]:
        return [[float(v) for v in p[a:b]] for a, b in self.spans]


def _reads(outputs: Sequence[ClaimOutputs], cfg: DecisionConfig) -> _Reads:
    rows: list[npt.NDArray[np.float64]] = []
    probs: list[dict[int, npt.NDArray[np.float32]]] = []
    y: list[int] = []
    folds: list[int] = []
    spans: list[tuple[int, int]] = []
    start = 0
    for c in outputs:
        p = stored_label_probs(c.candidates, cfg)
        rows.append(emit_rows(c.candidates, p, cfg))
        spans.append((start, start + len(c.candidates)))
        start += len(c.candidates)
        y.extend(int(d in c.claim.evidence) for d in c.doc_ids)
        folds.extend([c.fold] * len(c.candidates))
        probs.append(p)
    x = np.concatenate(rows) if rows else np.zeros((0, 0))
    return _Reads(probs, x, np.asarray(y, dtype=np.int64), np.asarray(folds, dtype=np.int64), spans)


def _predict(
    outputs: Sequence[ClaimOutputs], cfg: DecisionConfig, reads: _Reads, emit: Sequence[Sequence[float]]
) -> list[Prediction]:
    return [
        to_prediction(c.claim.id, c.doc_ids, picks(c.candidates, reads.probs[n], cfg, emit_probs=emit[n]))
        for n, c in enumerate(outputs)
    ]


@dataclass(frozen=True)
class ReadSetting:
    """One read setting of the grid fitted on a set of claims: the claims' outputs limited to it, what the
    label model read, the emit model fitted on all of them and each claim's P(evidence) by an emit model
    fitted without its fold (the inner cross-validation that judges the emit settings)."""

    cfg: DecisionConfig
    outputs: list[ClaimOutputs]
    reads: _Reads
    emit: EmitModel
    emit_probs: list[list[float]]


def fit_read_setting(
    outputs: Sequence[ClaimOutputs], k: int, read_settings: Mapping[str, Any]
) -> ReadSetting:
    """:class:`ReadSetting` of ``read_settings`` (the sentence threshold and the reader's options) on
    ``outputs``, the other settings the fixed decision's until the grid cuts."""
    folds = sorted({c.fold for c in outputs})
    remap = {f: n for n, f in enumerate(folds)}
    cfg = learned_decision({**FIXED_DECISION, **read_settings}, k)
    limited = [c.limited(cfg) for c in outputs]
    reads = _reads(limited, cfg)
    inner = np.asarray([remap[int(g)] for g in reads.folds])
    model, oof = fit_emit(reads.x, reads.y, inner, folds=max(2, len(folds)))
    return ReadSetting(cfg, limited, reads, model, reads.per_claim(oof))


def _prefix_counts(
    outputs: Sequence[ClaimOutputs], ranking: Sequence[Sequence[Pick]], longest: int
) -> npt.NDArray[np.int64]:
    """The scorer's counts of each claim emitting the first j picks of its ranking, j = 0..``longest``
    (a shorter ranking repeats its whole self). Shape: (claims, longest + 1, count columns)."""
    out = np.zeros((len(outputs), longest + 1, len(COUNT_COLUMNS)), dtype=np.int64)
    for n, (c, r) in enumerate(zip(outputs, ranking, strict=True)):
        for j in range(longest + 1):
            if j > len(r):
                out[n, j] = out[n, j - 1]
                continue
            entries = entries_from_prediction(to_prediction(c.claim.id, c.doc_ids, r[:j]))
            out[n, j] = judge_claim(c.claim, entries).counts
    return out


def choose_decision(
    outputs: Sequence[ClaimOutputs], k: int, grid: Mapping[str, tuple[Any, ...]]
) -> DecisionChoice:
    """Fit the emit model on ``outputs`` and choose the settings of ``grid`` that score best on them, each
    claim judged by an emit model fitted without its fold (inner cross-validation on the same folds)."""
    best: DecisionChoice | None = None
    for option in grid.get("reader", ({},)):
        for t in grid["sentence_threshold"]:
            read_settings = {"sentence_threshold": t, **option}
            fitted = fit_read_setting(outputs, k, read_settings)
            # ranked once: the emit threshold and the cap only cut the ranking (rule.emission_cut), and
            # a cut is a prefix of it, so each claim's prefixes are judged once
            ranking = [
                ranked_picks(c.candidates, p, fitted.cfg, emit_probs=q)
                for c, p, q in zip(fitted.outputs, fitted.reads.probs, fitted.emit_probs, strict=True)
            ]
            judged = _prefix_counts(fitted.outputs, ranking, max(grid["max_emitted"]))
            rows = np.arange(len(ranking))
            for e in grid["emit_threshold"]:
                for m in grid["max_emitted"]:
                    settings = {**read_settings, "emit_threshold": e, "max_emitted": m}
                    cut = learned_decision(settings, k)
                    kept = [len(emission_cut(r, cut)) for r in ranking]
                    value = headline(judged[rows, kept])
                    if best is None or value > best.objective + 1e-12:
                        best = DecisionChoice(settings, fitted.emit, value)
    if best is None:
        raise ConfigError("the decision grid is empty")
    return best


def cross_fit_decision(
    outputs: Sequence[ClaimOutputs], k: int, grid: Mapping[str, tuple[Any, ...]]
) -> tuple[list[Prediction], list[dict[str, Any]]]:
    """Pooled predictions of every claim, each by a decision fitted and tuned on the other folds only;
    and, per fold, what was chosen there."""
    preds_by_id: dict[str, Prediction] = {}
    chosen = []
    for fold in sorted({c.fold for c in outputs}):
        held = [c for c in outputs if c.fold == fold]
        choice = choose_decision([c for c in outputs if c.fold != fold], k, grid)
        limited = [c.limited(choice.config(k)) for c in held]
        reads = _reads(limited, choice.config(k))
        emit = choice.emit.predict(reads.x) if len(reads.x) else np.zeros(0)
        for p in _predict(limited, choice.config(k), reads, reads.per_claim(emit)):
            preds_by_id[str(p.id)] = p
        chosen.append(
            {"fold": fold, **choice.settings, "objective_on_other_folds": round(choice.objective, 4)}
        )
    return [preds_by_id[str(c.claim.id)] for c in outputs], chosen


def oracle_predictions(
    outputs: Sequence[ClaimOutputs], k: int, *, gold_label: bool = False, threshold: float | None = None
) -> list[Prediction]:
    """Predictions that emit exactly the gold evidence abstracts among each claim's candidates: the
    ceiling of the decision layer's "which abstracts" for these label and selector outputs. Sentences are
    listed and read as the fixed decision does; ``gold_label`` also puts the gold label in place of the
    label model's (then only rationale selection and retrieval cost anything)."""
    t = float(FIXED_DECISION["sentence_threshold"] if threshold is None else threshold)
    cfg = learned_decision({"sentence_threshold": t, "emit_threshold": 0.0, "max_emitted": k}, k)
    preds = []
    for c in outputs:
        probs = stored_label_probs(c.candidates, cfg)
        evidence = {}
        for i, cand in enumerate(c.candidates):
            if cand.doc_id not in c.claim.evidence or i not in probs:
                continue
            label = label_of(probs[i])
            if gold_label:
                label = c.claim.evidence[cand.doc_id][0].label
            evidence[cand.doc_id] = AbstractPrediction(label, tuple(listed_sentences(cand.scores, cfg)), 1.0)
        preds.append(Prediction(c.claim.id, evidence))
    return preds
