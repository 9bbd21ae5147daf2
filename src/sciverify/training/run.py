"""``sciverify train``: reproduce every shipped model from claims_train.jsonl, in one run directory.

Order matters: the label model and the rationale selector are trained on the training part of the
fixed split (:func:`sciverify.data.splits.split_claims`); the scorer's blend weight and the decision
thresholds are then chosen on the validation part only, with retrieval in the loop, against exactly
those two models. The run directory has the layout of the shipped weights (``label/``, ``rationale/``
with ``pipeline.toml``), so ``sciverify verify --models DIR`` uses it directly.
"""

from __future__ import annotations

import shutil
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from sciverify.errors import ArtifactError
from sciverify.training.tune import objective

__all__ = [
    "TINY_GRID",
    "TINY_LEARNED_GRID",
    "VALIDATION_CLAIMS",
    "VALIDATION_PREDICTIONS",
    "TrainRunConfig",
    "run_training",
]

#: Written into the run directory: the validation claims and the shipped decision's predictions for them
#: (out of fold when the learned emit model is chosen): the figures ``sciverify train`` reports.
VALIDATION_CLAIMS = "validation_claims.jsonl"
VALIDATION_PREDICTIONS = "validation_predictions.jsonl"

#: A small grid for ``--tiny`` runs (CI): the full grid is in :data:`sciverify.training.tune.DEFAULT_GRID`.
TINY_GRID: dict[str, tuple[Any, ...]] = {
    "k": (5,),
    "sentence_threshold": (0.4, 0.6),
    "max_sentences": (2,),
    "rationale_power": (0.5,),
    "rank_discount": (0.0,),
    "emit_threshold": (0.3, 0.5),
}
TINY_LEARNED_GRID: dict[str, tuple[Any, ...]] = {
    "k": (5,),
    "sentence_threshold": (0.4,),
    "max_sentences": (2,),
    "emit_threshold": (0.3, 0.5),
    "max_emitted": (1, 3),
}


@dataclass(frozen=True)
class TrainRunConfig:
    """What ``sciverify train`` does.

    Attributes:
        out_dir: run directory (default ``runs/train-<timestamp>``); must not exist or be empty.
        tiny: CI-sized recipes and a small slice of validation claims.
        seed: seed of every stage.
        index_dir: corpus index (default: the SciFact index).
        train_label: train the label model (else copy the shipped one, e.g. to retune the rest quickly).
        data_dir: SciFact data directory.
    """

    out_dir: Path | None = None
    tiny: bool = False
    seed: int = 13
    index_dir: Path | None = None
    train_label: bool = True
    data_dir: Path | None = None


def _write_validation(out: Path, train_file: Path, predictions: Sequence[Any]) -> dict[str, str]:
    """Write the validation claims (their lines of ``train_file``) and the shipped decision's predictions
    for them, so ``sciverify evaluate`` gives the quoted figures with bootstrap intervals and per-claim
    debug, and ``sciverify compare`` can test one run against another on the same claims."""
    from sciverify.data.io import iter_jsonl, write_jsonl, write_predictions

    ids = {p.id for p in predictions}
    claims_path, preds_path = out / VALIDATION_CLAIMS, out / VALIDATION_PREDICTIONS
    write_jsonl(claims_path, (obj for _, obj in iter_jsonl(train_file) if obj.get("id") in ids))
    write_predictions(preds_path, predictions)
    return {"claims": str(claims_path), "predictions": str(preds_path)}


def run_training(cfg: TrainRunConfig, log: Callable[[str], None] = print) -> dict[str, Any]:
    """Train label model + rationale selector, tune the decision; returns a summary (also in manifests)."""
    from sciverify.data.datasets import resolve_data_dir
    from sciverify.data.io import read_claims, read_corpus
    from sciverify.data.splits import split_claims
    from sciverify.models.artifacts import write_manifest
    from sciverify.models.base import get_label_predictor
    from sciverify.models.emit import EMIT_FILE
    from sciverify.models.sentence_scorer import SCORER_DIR, SentenceScorer
    from sciverify.pipeline.config import PipelineConfig
    from sciverify.pipeline.verify import PIPELINE_TOML, Verifier, default_model_dir
    from sciverify.retrieval.base import RetrievalConfig, make_retriever
    from sciverify.retrieval.embedder import get_embedder
    from sciverify.retrieval.index import CorpusIndex, ensure_default_index
    from sciverify.training.rationale_train import (
        END_TO_END_WEIGHTS,
        RationaleTrainConfig,
        choose_scorer_weight,
        gold_abstract_rows,
        settle_scorer_weight,
        train_rationale_selector,
    )
    from sciverify.training.scorer_train import ScorerTrainConfig, train_sentence_scorer
    from sciverify.training.tune import DEFAULT_GRID, LEARNED_GRID, tune_decision, tune_learned

    start = time.perf_counter()
    out = (
        Path(cfg.out_dir) if cfg.out_dir is not None else Path("runs") / time.strftime("train-%Y%m%d-%H%M%S")
    )
    if out.exists() and any(out.iterdir()):
        raise ArtifactError(f"output directory {out} is not empty; choose a fresh --out")
    out.mkdir(parents=True, exist_ok=True)
    paths = resolve_data_dir(cfg.data_dir)
    claims = read_claims(paths.train)
    split = split_claims(claims)
    val = split.validation[:40] if cfg.tiny else split.validation
    log(f"claims: {len(split.train)} train / {len(split.validation)} validation (fixed split)")
    index = (
        CorpusIndex.open(cfg.index_dir) if cfg.index_dir is not None else ensure_default_index(progress=True)
    )
    command = " ".join(["sciverify", *sys.argv[1:]]) if sys.argv else "sciverify train"
    data_files = {"claims_train.jsonl": paths.train, "corpus.jsonl": paths.corpus}
    summary: dict[str, Any] = {"out_dir": str(out), "seed": cfg.seed, "tiny": cfg.tiny}

    # 1. label model
    label_dir = out / "label"
    if cfg.train_label:
        from sciverify.training.label_train import LabelTrainConfig, train_label_model

        lcfg = LabelTrainConfig.tiny() if cfg.tiny else LabelTrainConfig()
        if hasattr(lcfg, "seed"):
            lcfg = replace(lcfg, seed=cfg.seed)
        log("training the label model ...")
        t0 = time.perf_counter()
        corpus = read_corpus(paths.corpus)
        summary["label"] = train_label_model(
            lcfg, split.train, corpus, label_dir, val_claims=val, progress=True
        )
        summary["label_seconds"] = round(time.perf_counter() - t0, 1)
    else:
        shutil.copytree(default_model_dir() / "label", label_dir)
        summary["label"] = "copied from the shipped weights"

    # 2. rationale selector: the cheap head, the sentence scorer, and their blend weight
    log("training the rationale selector ...")
    rcfg = RationaleTrainConfig.tiny() if cfg.tiny else RationaleTrainConfig()
    rcfg = replace(rcfg, seed=cfg.seed)
    embed = get_embedder(index.config.max_length).encode
    selector, rmetrics = train_rationale_selector(rcfg, split.train, index, embed=embed, log=log)
    rationale_dir = out / "rationale"
    log("training the sentence scorer ...")
    scfg = ScorerTrainConfig.tiny(cfg.seed) if cfg.tiny else ScorerTrainConfig(seed=cfg.seed)
    retrieve = None
    if scfg.hard_negative_docs:
        hard = make_retriever(index, RetrievalConfig(method="fusion", k=10))
        retrieve = lambda text, n: [h.row for h in hard.retrieve([text], n)[0]]  # noqa: E731
    t0 = time.perf_counter()
    rmetrics["scorer"] = train_sentence_scorer(
        scfg, split.train, index, rationale_dir / SCORER_DIR, retrieve=retrieve, progress=True
    )
    rmetrics["scorer_seconds"] = round(time.perf_counter() - t0, 1)
    scorer = SentenceScorer.load(rationale_dir / SCORER_DIR)
    rows = gold_abstract_rows(selector, scorer, val, index, embed, top=rcfg.scorer_top)
    proxy, by_weight = choose_scorer_weight(rows)
    log(f"sentence scorer blend weight on gold abstracts: {proxy} (sentence F1 by weight: {by_weight})")
    rmetrics["validation_sentence_f1_by_weight"] = by_weight

    # 3. the blend weight end to end, then the decision thresholds, all on validation with retrieval in
    # the loop; the emit model is fitted (out of fold) once per weight and kept for the chosen one
    base = PipelineConfig()
    labeler = get_label_predictor(base.label, label_dir)
    retriever = make_retriever(index, base.retrieval)
    learned_grid = TINY_LEARNED_GRID if cfg.tiny else LEARNED_GRID
    weights = sorted({proxy, *((proxy, 0.0) if cfg.tiny else END_TO_END_WEIGHTS)})
    learned_by_weight: dict[float, Any] = {}
    for w in weights:
        log(f"blend weight {w}: emit model fitted out of fold on {len(val)} validation claims ...")
        blended = selector.with_scorer(scorer, w, rcfg.scorer_top)
        verifier = Verifier(index, retriever, embed, blended, labeler, base)
        learned_by_weight[w] = tune_learned(verifier, val, grid=learned_grid, progress=log)
    objectives = {w: objective(r.metrics) for w, r in learned_by_weight.items()}
    weight = settle_scorer_weight(proxy, objectives)
    log(f"sentence scorer blend weight {weight} (objective by weight: {objectives})")
    rmetrics["scorer_weight"] = weight
    rmetrics["scorer_weight_on_gold_abstracts"] = proxy
    rmetrics["validation_objective_by_weight"] = {f"{w:.2f}": round(o, 4) for w, o in objectives.items()}
    selector = selector.with_scorer(scorer, weight, rcfg.scorer_top)
    selector.save(rationale_dir)
    summary["rationale"] = rmetrics

    log(f"tuning decision thresholds on {len(val)} validation claims ...")
    verifier = Verifier(index, retriever, embed, selector, labeler, base)
    heuristic = tune_decision(verifier, val, grid=TINY_GRID if cfg.tiny else DEFAULT_GRID, progress=log)
    learned = learned_by_weight[weight]
    summary["validation_heuristic"] = heuristic.metrics
    summary["validation_learned_out_of_fold"] = learned.metrics
    # the learned metrics are out of fold, the heuristic ones in sample: the learned one must win outright
    result = learned if objective(learned.metrics) > objective(heuristic.metrics) else heuristic
    log(f"decision: {result.decision.confidence} (objective {objective(result.metrics):.4f})")
    tuned = replace(base.with_k(result.k), decision=result.decision)
    tuned.dump_toml(rationale_dir / PIPELINE_TOML)
    if result.emit is not None:
        result.emit.save(rationale_dir / EMIT_FILE)
    summary["validation"] = result.metrics
    summary["validation_files"] = _write_validation(out, paths.train, result.predictions)
    summary["tuned"] = tuned.to_dict()
    summary["wall_seconds"] = round(time.perf_counter() - start, 1)
    write_manifest(
        rationale_dir,
        seed=cfg.seed,
        command=command,
        data_files=data_files,
        metrics={"validation": result.metrics, "train": rmetrics},
        extra={
            "split": "split_claims(fraction=0.2, seed=13)",
            "tuned": tuned.to_dict(),
            "wall_seconds": summary["wall_seconds"],
        },
    )
    write_manifest(
        out,
        seed=cfg.seed,
        command=command,
        data_files=data_files,
        metrics={"validation": result.metrics},
        extra={"summary": summary},
    )
    return summary
