"""Tune the emit decision on the validation split, with retrieval in the loop, scored by sciverify.scoring.

Retrieval and rationale scores do not depend on the decision thresholds, so they are computed once;
label probabilities depend only on *which* sentences were selected, so they are cached per
(claim, abstract, sentence set). The grid then costs one scorer call per setting. The objective is
the mean of the abstract label+rationale F1 and the sentence selection+label F1, the two headline
numbers of the SciFact leaderboard.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import numpy.typing as npt

from sciverify.data.records import AbstractPrediction, Claim, Prediction, doc_key
from sciverify.models.decision import DecisionConfig, decide, label_inputs, select_sentences

__all__ = [
    "DEFAULT_GRID",
    "LEARNED_GRID",
    "Prepared",
    "TuneResult",
    "objective",
    "predictions_for",
    "prepare",
    "tune_decision",
]

#: The search space of :func:`tune_decision` (kept small: 181 validation claims do not support more).
DEFAULT_GRID: dict[str, tuple[Any, ...]] = {
    "k": (3, 5, 10),
    "sentence_threshold": (0.1, 0.2, 0.3, 0.4, 0.5, 0.6),
    "max_sentences": (1, 2, 3),
    "min_rationale_score": (0.2, 0.4),
    "rationale_power": (0.0, 0.5, 1.0),
    "rank_discount": (0.0,),
    "emit_threshold": (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7),
    "max_emitted": (2, 3, 5),
}


#: The search space of :func:`tune_learned`: selection settings x the emit model's threshold and cap.
LEARNED_GRID: dict[str, tuple[Any, ...]] = {
    "k": (3, 5),
    "sentence_threshold": (0.2, 0.3, 0.4),
    "max_sentences": (2, 3),
    "emit_threshold": tuple(round(0.1 + 0.05 * i, 2) for i in range(14)),
    "max_emitted": (1, 2, 3),
    "max_listed": (0, 3),
}


@dataclass
class Prepared:
    """Everything about the validation claims that the thresholds do not change."""

    claims: list[Claim]
    hits: list[list[Any]]
    scores: list[list[npt.NDArray[np.float32]]]
    label_cache: dict[tuple[int, int, tuple[int, ...]], npt.NDArray[np.float32]]


@dataclass(frozen=True)
class TuneResult:
    """The best decision settings, their metrics, the whole table of tried settings, and the best
    setting's predictions for the tuning claims (out of fold for :func:`tune_learned`), so that the
    figures can be rescored with intervals or compared claim by claim."""

    k: int
    decision: DecisionConfig
    metrics: dict[str, float]
    table: list[dict[str, Any]]
    emit: Any = None
    predictions: tuple[Prediction, ...] = ()


def objective(metrics: dict[str, float]) -> float:
    """Mean of abstract label+rationale F1 and sentence selection+label F1."""
    return (metrics["abstract_rationalized"] + metrics["sentence_label"]) / 2.0


def prepare(verifier: Any, claims: Sequence[Claim], k: int) -> Prepared:
    """Retrieve ``k`` candidates per claim and score all their sentences (once)."""
    texts = [c.text for c in claims]
    hits, embs = verifier.candidates(texts, k)
    scores = [verifier.score_candidates(t, embs[i], hits[i]) for i, t in enumerate(texts)]
    return Prepared(list(claims), hits, scores, {})


def _fill_labels(
    verifier: Any,
    prep: Prepared,
    cfgs: Iterable[DecisionConfig],
    ks: Sequence[int],
    progress: Callable[[str], None] | None,
) -> None:
    """Run the label model on every (claim, abstract, sentence set) some config will ask about."""
    wanted: dict[int, dict[tuple[int, tuple[int, ...]], None]] = {}
    for cfg, k in itertools.product(list(cfgs), ks):
        for ci in range(len(prep.claims)):
            scores = prep.scores[ci][:k]
            for i in label_inputs(scores, cfg):
                key = (int(prep.hits[ci][i].row), tuple(sorted(select_sentences(scores[i], cfg))))
                if (ci, *key) not in prep.label_cache:
                    wanted.setdefault(ci, {})[key] = None
    total = sum(len(v) for v in wanted.values())
    if progress:
        progress(f"label model on {total} (claim, abstract, rationale) inputs")
    index = verifier.index
    for ci, keys in wanted.items():
        evidences = []
        for row, sents in keys:
            sentences = index.sentences(row)
            evidences.append((index.title(row), [sentences[j] for j in sents]))
        probs = verifier.labeler.predict(prep.claims[ci].text, evidences)
        for (row, sents), p in zip(keys, probs, strict=True):
            prep.label_cache[(ci, row, sents)] = np.asarray(p, dtype=np.float32)


def _cached_probs(prep: Prepared, ci: int, cfg: DecisionConfig, k: int) -> dict[int, npt.NDArray[np.float32]]:
    hits, scores = prep.hits[ci][:k], prep.scores[ci][:k]
    return {
        i: prep.label_cache[(ci, int(hits[i].row), tuple(sorted(select_sentences(scores[i], cfg))))]
        for i in label_inputs(scores, cfg)
    }


def predictions_for(
    prep: Prepared, cfg: DecisionConfig, k: int, emit_probs: Sequence[Sequence[float]] | None = None
) -> list[Prediction]:
    """Predictions under one setting, from cached scores and label probabilities.

    ``emit_probs`` (learned mode): per claim, the emit model's probability for each of its top-k candidates.
    """
    preds = []
    for ci, claim in enumerate(prep.claims):
        hits, scores = prep.hits[ci][:k], prep.scores[ci][:k]
        probs = _cached_probs(prep, ci, cfg, k)
        evidence = {
            doc_key(hits[v.candidate].doc_id): AbstractPrediction(
                v.label, v.sentences, round(v.confidence, 4)
            )
            for v in decide(scores, probs, cfg, emit_probs[ci] if emit_probs is not None else None)
        }
        preds.append(Prediction(claim.id, evidence))
    return preds


def _metrics(claims: Sequence[Claim], preds: Sequence[Prediction]) -> dict[str, float]:
    from sciverify.scoring import score

    report = score(claims, preds)
    return {family: prf.f1 for family, prf in report.aggregate.items()}


def tune_decision(
    verifier: Any,
    claims: Sequence[Claim],
    base: DecisionConfig | None = None,
    grid: dict[str, tuple[Any, ...]] | None = None,
    progress: Callable[[str], None] | None = None,
) -> TuneResult:
    """Grid-search the decision thresholds (and ``k``) on ``claims``; ties go to the earlier setting."""
    grid = dict(grid or DEFAULT_GRID)
    base = base or DecisionConfig()
    ks = tuple(grid.pop("k", (verifier.config.retrieval.k,)))
    names = list(grid)
    prep = prepare(verifier, claims, max(ks))
    settings = []
    for values in itertools.product(*(grid[n] for n in names)):
        settings.append(replace(base, **dict(zip(names, values, strict=True))))
    # label inputs depend only on selection settings: fill the cache for the distinct ones
    distinct = {
        (c.sentence_threshold, c.max_sentences, c.min_rationale_score, c.max_labelled): c for c in settings
    }
    _fill_labels(verifier, prep, distinct.values(), ks, progress)
    table = []
    best: tuple[float, int, DecisionConfig, dict[str, float], list[Prediction]] | None = None
    for k in ks:
        for cfg in settings:
            preds = predictions_for(prep, cfg, k)
            metrics = _metrics(prep.claims, preds)
            value = objective(metrics)
            table.append({"k": k, **cfg.to_json(), **metrics, "objective": value})
            if best is None or value > best[0] + 1e-12:
                best = (value, k, cfg, metrics, preds)
    assert best is not None
    return TuneResult(best[1], best[2], best[3], table, predictions=tuple(best[4]))


def tune_learned(
    verifier: Any,
    claims: Sequence[Claim],
    base: DecisionConfig | None = None,
    grid: dict[str, tuple[Any, ...]] | None = None,
    progress: Callable[[str], None] | None = None,
) -> TuneResult:
    """Fit the emit model on ``claims`` and tune the settings around it, scoring out of fold.

    For each selection setting (k, sentence threshold, sentences per abstract) the emit model is fitted
    with claim-grouped 5-fold cross-validation; every threshold is scored on the out-of-fold
    probabilities, so no claim is scored by a model that saw it. The returned emit model is refitted on
    all claims for the best setting.
    """
    from sciverify.models.emit import emit_features, fit_emit

    grid = dict(grid or LEARNED_GRID)
    base = replace(
        base or DecisionConfig(), confidence="learned", min_rationale_score=0.0, rationale_power=0.0
    )
    ks = tuple(grid.pop("k", (verifier.config.retrieval.k,)))
    # settings that change neither the label model's inputs nor the emit model's features
    emit_grid = {n: grid.pop(n) for n in ("emit_threshold", "max_emitted", "max_listed") if n in grid}
    prep = prepare(verifier, claims, max(ks))
    names = list(grid)
    selections = [
        replace(base, max_labelled=max(ks), **dict(zip(names, values, strict=True)))
        for values in itertools.product(*(grid[n] for n in names))
    ]
    _fill_labels(verifier, prep, selections, ks, progress)
    table = []
    best: tuple[float, int, DecisionConfig, dict[str, float], Any, list[Prediction]] | None = None
    for k in ks:
        for sel in selections:
            sel = replace(sel, max_labelled=k)
            rows: list[npt.NDArray[np.float64]] = []
            y: list[int] = []
            groups: list[int] = []
            spans: list[tuple[int, int]] = []
            for ci, claim in enumerate(prep.claims):
                hits, scores = prep.hits[ci][:k], prep.scores[ci][:k]
                probs = _cached_probs(prep, ci, sel, k)
                x = emit_features([float(h.score) for h in hits], scores, probs, sel.sentence_threshold)
                spans.append((len(rows), len(rows) + len(hits)))
                rows.extend(x)
                y.extend(int(doc_key(h.doc_id) in claim.evidence) for h in hits)
                groups.extend([ci] * len(hits))
            if not rows:
                continue
            model, oof = fit_emit(np.asarray(rows), np.asarray(y), np.asarray(groups))
            per_claim = [list(oof[a:b]) for a, b in spans]
            for values in itertools.product(*emit_grid.values()):
                cfg = replace(sel, **dict(zip(emit_grid, values, strict=True)))
                preds = predictions_for(prep, cfg, k, per_claim)
                metrics = _metrics(prep.claims, preds)
                value = objective(metrics)
                table.append({"k": k, **cfg.to_json(), **metrics, "objective": value})
                if best is None or value > best[0] + 1e-12:
                    best = (value, k, cfg, metrics, model, preds)
    if best is None:
        raise ValueError("no validation claims to tune on")
    return TuneResult(best[1], best[2], best[3], table, emit=best[4], predictions=tuple(best[5]))
