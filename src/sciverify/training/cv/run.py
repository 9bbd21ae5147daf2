"""``sciverify train``: cross-fitted models, an honest estimate, and the final models.

A figure is an estimate of quality on unseen claims only if the claims it is scored on chose nothing: no
model weight, threshold, seed or setting. So every train claim is scored by models that never saw it
(stacking, Wolpert 1992):

1. The claims are cut into grouped folds (:mod:`sciverify.training.cv.plan`). For each fold, the rationale
   selector and the label model are trained on the other folds and run on the fold's claims: retrieval, a
   score for every sentence of the top ``k`` abstracts, and label probabilities for what the label model
   would read (:mod:`sciverify.training.cv.outputs`). The label model's auxiliary entailment stage sees no
   SciFact claim, so one checkpoint serves every fold.
2. The decision layer (the emit model and the thresholds) is then evaluated by a second cross-validation
   over those out-of-fold outputs, on the same folds (:mod:`sciverify.training.cv.decision`). The pooled
   predictions of all claims are *the* reported figures (:mod:`sciverify.training.cv.report`;
   ``sciverify evaluate`` on ``oof_predictions.jsonl`` gives them with bootstrap intervals).
3. The decision is fitted once more on all out-of-fold outputs, and the final selector and label model are
   trained on all claims with the same recipe: those are what ships.

Every stage writes its outputs atomically and is skipped when they exist
(:class:`sciverify.training.cv.stages.Stages`), so a killed run resumes where it stopped. The small files
(fold plan, per-claim outputs, predictions, summaries) are meant to be committed; model files go under
``models/``.
"""

from __future__ import annotations

import json
import shutil
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

from sciverify.data.io import read_jsonl, write_predictions, write_text_atomic
from sciverify.data.records import Claim, Prediction, doc_key
from sciverify.models.emit import EMIT_FILE, EmitModel
from sciverify.pipeline.candidates import ClaimOutputs
from sciverify.pipeline.config import PIPELINE_TOML, PipelineConfig
from sciverify.training.cv.decision import (
    DECISION_GRID,
    FIXED_DECISION,
    READER_GRIDS,
    choose_decision,
    cross_fit_decision,
    decision_config,
    fixed_grid,
)
from sciverify.training.cv.outputs import (
    CANDIDATES,
    candidate_rows,
    fold_rows,
    label_rows,
    labels_file,
    load_outputs,
    write_rows,
)
from sciverify.training.cv.plan import (
    CvConfig,
    fold_splits,
    label_recipe,
    rationale_recipe,
    reader_recipe,
    run_name,
    write_plan,
)
from sciverify.training.cv.reader import (
    READER_WORK,
    attach_reader,
    read_fold,
    read_reader_rows,
    reader_file,
    reader_milestones,
    retrieved_doc_ids,
    train_fold_reader,
    write_fold,
)
from sciverify.training.cv.report import gold_label_accuracy, score_summary, tuned_against_fixed
from sciverify.training.cv.stages import Stages

__all__ = ["OOF_FIXED", "OOF_PREDICTIONS", "OOF_TUNED", "run_cv"]

OOF_PREDICTIONS = "oof_predictions.jsonl"
OOF_FIXED = "oof_predictions_fixed.jsonl"
OOF_TUNED = "oof_predictions_tuned.jsonl"


def _dump(path: Path, data: object, *, sort_keys: bool = True) -> None:
    write_text_atomic(path, json.dumps(data, indent=1, sort_keys=sort_keys, default=str) + "\n")


def _decide(
    outputs: Sequence[ClaimOutputs],
    k: int,
    seed: int,
    label_file_rows: Sequence[Mapping[str, Any]],
    grid: Mapping[str, tuple[Any, ...]] = DECISION_GRID,
) -> tuple[dict[str, Any], dict[str, list[Prediction]], EmitModel]:
    """The decision layer cross-fitted both ways, the paired test, and the final choice on all outputs;
    returns the summary, the prediction files to write and the final emit model."""
    t0 = time.perf_counter()
    scored = [c.claim for c in outputs]
    preds, per_fold = cross_fit_decision(outputs, k, grid)
    fixed, _ = cross_fit_decision(outputs, k, fixed_grid())
    test = tuned_against_fixed(scored, preds, fixed, seed)
    keep_tuned = test["tuned_wins"]
    final = choose_decision(outputs, k, grid if keep_tuned else fixed_grid())
    summary = {
        "tuned": score_summary(scored, preds if keep_tuned else fixed, seed),
        "tuned_decision": score_summary(scored, preds, seed),
        "fixed": score_summary(scored, fixed, seed),
        "fixed_settings": FIXED_DECISION,
        "tuned_against_fixed": test,
        "decision_shipped": "tuned" if keep_tuned else "fixed",
        "chosen_per_fold": per_fold,
        "final_decision": final.settings,
        "gold_evidence_labels": gold_label_accuracy(label_file_rows),
        "decision_seconds": round(time.perf_counter() - t0, 1),
    }
    # the reported predictions are those of the decision that ships
    files = {OOF_PREDICTIONS: preds if keep_tuned else fixed, OOF_FIXED: fixed, OOF_TUNED: preds}
    return summary, files, final.emit


def run_cv(cfg: CvConfig, log: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Run (or resume) the cross-fitted protocol; returns the summary written to ``<base>/summary.json``."""
    from sciverify.data.datasets import resolve_data_dir
    from sciverify.data.io import read_claims, read_corpus
    from sciverify.data.splits import fold_claims
    from sciverify.models.catalog import get_label_predictor, get_selector
    from sciverify.pipeline.verify import Verifier
    from sciverify.retrieval.embedder import get_embedder
    from sciverify.retrieval.index import CorpusIndex, ensure_default_index
    from sciverify.retrieval.methods import make_retriever
    from sciverify.training.label_train import ensure_aux_checkpoint, train_label_model
    from sciverify.training.rationale_train import train_rationale_selector

    say = log or (lambda m: print(m, file=sys.stderr, flush=True))
    out = Path(cfg.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    stages = Stages(out, say)
    paths = resolve_data_dir(cfg.data_dir)
    claims = read_claims(paths.train)
    fold_of = fold_claims(claims, cfg.folds, cfg.seed)
    write_plan(out, cfg, claims, fold_of)

    index = CorpusIndex.open(cfg.index_dir) if cfg.index_dir else ensure_default_index(progress=True)
    embed = get_embedder(index.config.max_length).encode
    pipeline = PipelineConfig().with_k(cfg.k)
    retriever = make_retriever(index, pipeline.retrieval)
    corpus = read_corpus(paths.corpus)
    models = out / "models"
    base = cfg.label_base
    lcfg = label_recipe(base, cfg.seed, cfg.tiny, None if cfg.tiny else models / f"aux-{base}.pt")
    aux_ckpt = Path(lcfg.aux_checkpoint) if lcfg.aux_checkpoint else None
    rcfg = rationale_recipe(cfg.seed, cfg.tiny)

    def train_selector(train: Sequence[Claim], where: Path) -> None:
        selector, _ = train_rationale_selector(rcfg, train, index, embed=embed, log=say)
        selector.save(where)

    def train_labeler(train: Sequence[Claim], where: Path, metrics_file: Path) -> None:
        if aux_ckpt is not None:
            ensure_aux_checkpoint(lcfg, corpus, progress=True)
        metrics = train_label_model(lcfg, train, corpus, where, progress=True)
        _dump(metrics_file, metrics, sort_keys=False)

    splits = fold_splits(claims, fold_of, cfg.folds, cfg.limit)
    for fold, (train, held) in enumerate(splits):
        fdir, sel_dir = out / f"fold-{fold}", models / f"fold-{fold}" / "rationale"

        def candidates(
            train: list[Claim] = train, held: list[Claim] = held, sel_dir: Path = sel_dir, fold: int = fold
        ) -> None:
            if not (sel_dir / "config.json").exists():
                train_selector(train, sel_dir)
            selector = get_selector(pipeline.selector, sel_dir)
            verifier = Verifier(index, retriever, embed, selector, None, pipeline)
            fdir = out / f"fold-{fold}"
            write_rows(fdir / CANDIDATES, candidate_rows(verifier, held, cfg.k, fold))

        stages.run(f"fold-{fold}/selector+candidates", [fdir / CANDIDATES], candidates)

    # the label models second: the selectors' stage is cheap, so a run's first minutes give every fold's
    # candidates (and catch problems early) before the long training starts
    for fold, (train, held) in enumerate(splits):
        fdir, label_dir = out / f"fold-{fold}", models / f"fold-{fold}" / f"label-{base}"

        def labels(
            train: list[Claim] = train,
            held: list[Claim] = held,
            label_dir: Path = label_dir,
            fdir: Path = fdir,
        ) -> None:
            if not (label_dir / "model.onnx").exists():
                train_labeler(train, label_dir, fdir / f"label-{base}.train.json")
            labeler = get_label_predictor(pipeline.label, label_dir)
            rows = read_jsonl(fdir / CANDIDATES)
            write_rows(fdir / labels_file(base), label_rows(labeler, index, held, rows))

        stages.run(f"fold-{fold}/label-{base}", [fdir / labels_file(base)], labels)

    # the reader third (when the run has one): trained per fold, then it reads every candidate sentence
    reader = cfg.reader
    docs = {doc_key(a.doc_id): a for a in corpus}
    rdcfg = reader_recipe(reader, cfg.seed, cfg.tiny) if reader else None
    if rdcfg is not None:
        retrieved = retrieved_doc_ids(out, cfg.folds)
        for fold, (train, held) in enumerate(splits):
            fdir = out / f"fold-{fold}"

            def read(train: list[Claim] = train, held: list[Claim] = held, fold: int = fold) -> None:
                assert rdcfg is not None
                model_dir = models / f"fold-{fold}" / f"reader-{reader}"
                train_fold_reader(rdcfg, train, held, docs, retrieved, model_dir, models / READER_WORK, say)
                rows = read_jsonl(out / f"fold-{fold}" / CANDIDATES)
                write_fold(out / f"fold-{fold}" / reader_file(reader), read_fold(model_dir, held, rows, docs))

            stages.run(f"fold-{fold}/reader-{reader}", [fdir / reader_file(reader)], read)

    # the decision layer, cross-fitted over the pooled out-of-fold outputs
    label_file_rows = fold_rows(out, labels_file(base), range(cfg.folds))
    outputs = load_outputs(claims, fold_rows(out, CANDIDATES, range(cfg.folds)), label_file_rows)
    grid: dict[str, tuple[Any, ...]] = dict(DECISION_GRID)
    bdir = out / base
    if reader:
        outputs = attach_reader(outputs, fold_rows(out, reader_file(reader), range(cfg.folds)))
        grid["reader"] = READER_GRIDS[cfg.reader_role]
        bdir = out / run_name(base, reader, cfg.reader_role)

    def decision() -> None:
        found, files, emit = _decide(outputs, cfg.k, cfg.seed, label_file_rows, grid)
        for name, preds in files.items():
            write_predictions(bdir / name, preds)
        emit.save(bdir / EMIT_FILE)
        from sciverify.training.calibrate import save_calibration

        save_calibration(outputs, decision_config(found["final_decision"], cfg.k), bdir,
                         source=f"{out.name}/{bdir.name}")
        summary = {"label_base": base, "claims": len(outputs), "k": cfg.k, **found}
        if rdcfg is not None:
            summary["reader"] = reader
            summary["reader_milestones"] = reader_milestones(read_reader_rows(out, claims, reader))
            summary["reader_recipe"] = asdict(rdcfg)
        _dump(bdir / "summary.json", {**summary, "label_recipe": asdict(lcfg)})

    stages.run(f"decision-{bdir.name}", [bdir / "summary.json"], decision)
    summary: dict[str, Any] = json.loads((bdir / "summary.json").read_text())

    if cfg.final:
        final_dir = models / f"final-{bdir.name}"
        final_cfg = decision_config(summary["final_decision"], cfg.k)
        stages.run(
            f"{final_dir.name}/selector",
            [final_dir / "rationale" / "config.json"],
            lambda: train_selector(claims, final_dir / "rationale"),
        )
        if final_cfg.label_source == "model":

            def final_label() -> None:
                if copy_twin_label(out, base, bdir):
                    say(f"final label model copied from the run without the reader: final-{base}")
                    return
                train_labeler(claims, final_dir / "label", bdir / "final-label.train.json")

            stages.run(f"{final_dir.name}/label-{base}", [final_dir / "label" / "model.onnx"], final_label)
        if rdcfg is not None and final_cfg.uses_reader:

            def final_reader() -> None:
                assert rdcfg is not None
                if copy_twin_reader(models, base, reader, final_dir):
                    say(f"final reader copied from the run with the reader's full role: "
                        f"final-{run_name(base, reader)}")
                    return
                train_fold_reader(
                    rdcfg, claims, [], docs, retrieved, final_dir / "reader", models / READER_WORK, say
                )

            done = [final_dir / "reader" / "training.json"]
            stages.run(f"{final_dir.name}/reader-{reader}", done, final_reader)
        data_files = {"claims_train.jsonl": paths.train, "corpus.jsonl": paths.corpus}
        _finish_final(final_dir, bdir, summary, cfg, data_files)
    return summary


def copy_twin_label(out: Path, base: str, bdir: Path) -> bool:
    """Give a run with the reader the final label model of the same run without it, when that exists.

    Both are trained by the same recipe and seed on the same 809 claims, so they are one model: copying
    it saves the ten minutes retraining would take. True when it was copied."""
    twin, dest = out / "models" / f"final-{base}" / "label", out / "models" / f"final-{bdir.name}" / "label"
    if not _copy_finished(twin, dest, "model.onnx"):
        return False
    if (out / base / "final-label.train.json").exists():
        shutil.copyfile(out / base / "final-label.train.json", bdir / "final-label.train.json")
    return True


def copy_twin_reader(models: Path, base: str, reader: str, final_dir: Path) -> bool:
    """Give a run whose reader only lists the final reader of the run with its full role, when that is
    finished: the roles share the recipe, seed and claims (the role changes the decision, not the
    training), so it is the same model. True when it was copied."""
    twin = models / f"final-{run_name(base, reader)}" / "reader"
    return _copy_finished(twin, final_dir / "reader", "training.json")


def _copy_finished(twin: Path, dest: Path, marker: str) -> bool:
    """Copy the model directory ``twin`` to ``dest`` when it is another directory and finished (holds
    ``marker``, the file its training writes last). True when it was copied."""
    if twin == dest or not (twin / marker).exists():
        return False
    shutil.copytree(twin, dest, dirs_exist_ok=True)
    return True


def _finish_final(
    final_dir: Path, bdir: Path, summary: Mapping[str, Any], cfg: CvConfig, data_files: dict[str, Path]
) -> None:
    """Put the decision chosen on all out-of-fold outputs beside the final models, so the directory has
    the layout of the shipped weights (``sciverify verify --models DIR``), and stamp both model
    directories with a manifest whose metrics are the cross-validated figures."""
    from sciverify.models.artifacts import write_manifest

    settings = summary["final_decision"]
    tuned = replace(PipelineConfig().with_k(cfg.k), decision=decision_config(settings, cfg.k))
    tuned.dump_toml(final_dir / "rationale" / PIPELINE_TOML)
    shutil.copyfile(bdir / EMIT_FILE, final_dir / "rationale" / EMIT_FILE)
    from sciverify.models.calibration import LABEL_CALIBRATION_FILE

    if (bdir / LABEL_CALIBRATION_FILE).exists():
        shutil.copyfile(bdir / LABEL_CALIBRATION_FILE, final_dir / "rationale" / LABEL_CALIBRATION_FILE)
    command = f"sciverify train --cv {cfg.folds} --label-base {cfg.label_base} --seed {cfg.seed}"
    if cfg.reader:
        command += f" --reader {cfg.reader}"
    if cfg.reader_role != "all":
        command += f" --reader-role {cfg.reader_role}"
    metrics = {"cross_validated": summary["tuned"], "gold_evidence_labels": summary["gold_evidence_labels"]}
    if "reader_milestones" in summary:
        metrics["reader_milestones"] = summary["reader_milestones"]
    extra = {"trained_on": "all claims of claims_train.jsonl", "decision": summary["decision_shipped"]}
    for part in ("rationale", "label", "reader"):
        if part != "rationale" and not (final_dir / part).is_dir():
            continue
        write_manifest(
            final_dir / part,
            seed=cfg.seed,
            command=command,
            data_files=data_files,
            metrics=metrics,
            extra=extra,
        )
