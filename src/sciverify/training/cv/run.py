"""``sciverify train``: cross-fitted models, an honest estimate, and the final models.

A figure is an estimate of quality on unseen claims only if the claims it is scored on chose nothing: no
model weight, threshold, seed or setting. So every train claim is scored by models that never saw it
(stacking, Wolpert 1992):

1. The claims are cut into grouped folds (:mod:`sciverify.training.cv.plan`). For each fold, the rationale
   selector, the label model and the reader (when the run has one; both are registered learners,
   :mod:`sciverify.training.cv.learners`) are trained on the other folds and run on the fold's claims:
   retrieval, a score for every sentence of the top ``k`` abstracts, and label probabilities for what the
   label model would read (:mod:`sciverify.training.cv.outputs`). The label model's auxiliary entailment
   stage sees no SciFact claim, so one checkpoint serves every fold.
2. The decision layer (the emit model and the thresholds) is then evaluated by a second cross-validation
   over those out-of-fold outputs, on the same folds (:mod:`sciverify.training.cv.decision`). The pooled
   predictions of all claims are *the* reported figures (:mod:`sciverify.training.cv.report`;
   ``sciverify evaluate`` on ``oof_predictions.jsonl`` gives them with bootstrap intervals).
3. The decision is fitted once more on all out-of-fold outputs, and the final selector and label model are
   trained on all claims with the same recipe: those are what ships.

The label model and the reader train on the run's ``device`` (``--device``; :mod:`sciverify.training.device`),
an argument of :func:`run_cv` beside its :class:`CvConfig`: where a model trains is not what the run is,
so it changes no recipe, plan, stamp or summary, and a run started on a GPU resumes on a CPU.

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
from dataclasses import asdict, dataclass, replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from sciverify.data.io import read_jsonl, write_predictions, write_text_atomic
from sciverify.data.records import Claim, Prediction, doc_key
from sciverify.decision.candidates import ClaimOutputs
from sciverify.decision.grid import DECISION_GRID, FIXED_DECISION, READER_GRIDS, fixed_grid
from sciverify.decision.settings import (
    DECISION_DIR,
    DECISION_TOML,
    DecisionConfig,
    dump_decision,
    learned_decision,
)
from sciverify.errors import ConfigError
from sciverify.models.emit import EMIT_FILE, EmitModel
from sciverify.pipeline.config import PIPELINE_TOML, PipelineConfig
from sciverify.retrieval.base import Retriever
from sciverify.training.cv.decision import choose_decision, cross_fit_decision
from sciverify.training.cv.learners import LABEL, READER, Fit, Learner, Role, RunData
from sciverify.training.cv.outputs import CANDIDATES, candidate_rows, fold_rows, load_outputs, write_rows
from sciverify.training.cv.plan import CvConfig, fold_splits, rationale_recipe, run_name, write_plan
from sciverify.training.cv.reader import attach_reader, read_reader_rows, reader_milestones, retrieved_doc_ids
from sciverify.training.cv.report import gold_label_accuracy, score_summary, tuned_against_fixed
from sciverify.training.cv.stages import Stages
from sciverify.training.device import resolve_device

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

__all__ = ["OOF_FIXED", "OOF_PREDICTIONS", "OOF_TUNED", "run_cv", "train_entailment_stage"]

OOF_PREDICTIONS = "oof_predictions.jsonl"
OOF_FIXED = "oof_predictions_fixed.jsonl"
OOF_TUNED = "oof_predictions_tuned.jsonl"


def _dump(path: Path, data: object, *, sort_keys: bool = True) -> None:
    write_text_atomic(path, json.dumps(data, indent=1, sort_keys=sort_keys, default=str) + "\n")


@dataclass(frozen=True)
class _Part:
    """One learner of the run in its role, with its name and the recipe the run fixed for it."""

    role: Role
    name: str
    learner: Learner[Any]
    recipe: DataclassInstance

    def fold_dir(self, models: Path, fold: int) -> Path:
        return models / f"fold-{fold}" / self.role.model_dir(self.name)

    @property
    def outputs_file(self) -> str:
        return self.role.outputs_file(self.name)


@dataclass
class _Run:
    """What the steps of one run share: its settings, folds, index and models (set up by :func:`_open`)."""

    cfg: CvConfig
    out: Path
    say: Callable[[str], None]
    stages: Stages
    claims: list[Claim]
    splits: list[tuple[list[Claim], list[Claim]]]
    pipeline: PipelineConfig
    data: RunData
    embed: Callable[[Sequence[str]], npt.NDArray[np.float32]]
    retriever: Retriever
    label: _Part
    reader: _Part | None
    data_files: dict[str, Path]

    @property
    def models(self) -> Path:
        return self.out / "models"

    @property
    def base(self) -> str:
        return self.cfg.label_base


def _part(role: Role, name: str, cfg: CvConfig, models: Path) -> _Part:
    learner = role.learners.get(name)
    return _Part(role, name, learner, learner.recipe(cfg.seed, cfg.tiny, models))


def _open(cfg: CvConfig, say: Callable[[str], None], device: str) -> _Run:
    """Resolve the learners (an unknown name fails first), write the fold plan, open the index and data;
    the learners train on ``device`` (a resolved one)."""
    from sciverify.data.datasets import resolve_data_dir
    from sciverify.data.io import read_claims, read_corpus
    from sciverify.data.splits import fold_claims
    from sciverify.retrieval.embedder import get_embedder
    from sciverify.retrieval.index import CorpusIndex, ensure_default_index
    from sciverify.retrieval.methods import make_retriever

    out = Path(cfg.out_dir)
    models = out / "models"
    label = _part(LABEL, cfg.label_base, cfg, models)
    reader = _part(READER, cfg.reader, cfg, models) if cfg.reader else None
    out.mkdir(parents=True, exist_ok=True)
    paths = resolve_data_dir(cfg.data_dir)
    claims = read_claims(paths.train)
    fold_of = fold_claims(claims, cfg.folds, cfg.seed)
    write_plan(out, cfg, claims, fold_of)
    index = CorpusIndex.open(cfg.index_dir) if cfg.index_dir else ensure_default_index(progress=True)
    pipeline = PipelineConfig().with_k(cfg.k)
    corpus = read_corpus(paths.corpus)
    data = RunData(corpus, {doc_key(a.doc_id): a for a in corpus}, index, models, {}, say, device, cfg.tiny)
    return _Run(
        cfg=cfg,
        out=out,
        say=say,
        stages=Stages(out, say),
        claims=claims,
        splits=fold_splits(claims, fold_of, cfg.folds, cfg.limit),
        pipeline=pipeline,
        data=data,
        embed=get_embedder(index.config.max_length).encode,
        retriever=make_retriever(index, pipeline.retrieval),
        label=label,
        reader=reader,
        data_files={"claims_train.jsonl": paths.train, "corpus.jsonl": paths.corpus},
    )


def _train_selector(run: _Run, train: Sequence[Claim], where: Path) -> None:
    from sciverify.training.rationale_train import train_rationale_selector

    rcfg = rationale_recipe(run.cfg.seed, run.cfg.tiny)
    selector, _ = train_rationale_selector(rcfg, train, run.data.index, embed=run.embed, log=run.say)
    selector.save(where)


def _fold_candidates(run: _Run, fold: int) -> None:
    """A fold's selector (trained unless finished) and its held-out claims' candidates."""
    from sciverify.models.catalog import get_selector
    from sciverify.pipeline.verify import Verifier

    train, held = run.splits[fold]
    sel_dir = run.models / f"fold-{fold}" / "rationale"
    if not (sel_dir / "config.json").exists():
        _train_selector(run, train, sel_dir)
    selector = get_selector(run.pipeline.selector, sel_dir)
    verifier = Verifier(run.data.index, run.retriever, run.embed, selector, None, run.pipeline)
    write_rows(run.out / f"fold-{fold}" / CANDIDATES, candidate_rows(verifier, held, run.cfg.k, fold))


def _fold_learner(run: _Run, part: _Part, fold: int) -> None:
    """A fold's model of one role (trained unless finished) and its outputs on the held-out claims."""
    train, held = run.splits[fold]
    fdir, where = run.out / f"fold-{fold}", part.fold_dir(run.models, fold)
    if not part.learner.artifact.finished(where):
        report = part.learner.train(part.recipe, Fit(train, held, where, run.data))
        if report is not None:
            _dump(fdir / f"{part.role.name}-{part.name}.train.json", report, sort_keys=False)
    rows = read_jsonl(fdir / CANDIDATES)
    model = part.learner.load(where)
    write_rows(fdir / part.outputs_file, part.role.outputs(model, held, rows, run.data))


def _fold_stages(run: _Run) -> None:
    """Every fold's stages: the selectors and candidates first (cheap: a run's first minutes give every
    fold's candidates and catch problems early), then the label models, then the reader when the run has
    one."""
    for fold in range(len(run.splits)):
        done = [run.out / f"fold-{fold}" / CANDIDATES]
        run.stages.run(f"fold-{fold}/selector+candidates", done, partial(_fold_candidates, run, fold))
    parts = [run.label] + ([run.reader] if run.reader is not None else [])
    for part in parts:
        if part.role is READER:  # its hard negatives are the claims' retrieved abstracts
            run.data = replace(run.data, retrieved=retrieved_doc_ids(run.out, run.cfg.folds))
        for fold in range(len(run.splits)):
            done = [run.out / f"fold-{fold}" / part.outputs_file]
            name = f"fold-{fold}/{part.role.model_dir(part.name)}"
            run.stages.run(name, done, partial(_fold_learner, run, part, fold))


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


def _decision_dir(run: _Run) -> Path:
    """The folder of the run's decision and out-of-fold predictions (:func:`run_name`)."""
    return run.out / run_name(run.base, run.cfg.reader, run.cfg.reader_role)


def _decision_stage(run: _Run, bdir: Path) -> None:
    """The decision layer, cross-fitted over the pooled out-of-fold outputs, with its emit model, the label
    calibrator and the run's summary."""
    from sciverify.training.calibrate import save_calibration

    folds = range(run.cfg.folds)
    label_file_rows = fold_rows(run.out, run.label.outputs_file, folds)
    outputs = load_outputs(run.claims, fold_rows(run.out, CANDIDATES, folds), label_file_rows)
    grid: dict[str, tuple[Any, ...]] = dict(DECISION_GRID)
    if run.reader is not None:
        outputs = attach_reader(outputs, fold_rows(run.out, run.reader.outputs_file, folds))
        grid["reader"] = READER_GRIDS[run.cfg.reader_role]
    found, files, emit = _decide(outputs, run.cfg.k, run.cfg.seed, label_file_rows, grid)
    for name, preds in files.items():
        write_predictions(bdir / name, preds)
    emit.save(bdir / EMIT_FILE)
    save_calibration(outputs, learned_decision(found["final_decision"], run.cfg.k), bdir,
                     source=f"{run.out.name}/{bdir.name}")
    summary = {"label_base": run.base, "claims": len(outputs), "k": run.cfg.k, **found}
    if run.reader is not None:
        summary["reader"] = run.reader.name
        read = read_reader_rows(run.out, run.claims, run.reader.name)
        summary["reader_milestones"] = reader_milestones(read)
        summary["reader_recipe"] = asdict(run.reader.recipe)
    _dump(bdir / "summary.json", {**summary, "label_recipe": asdict(run.label.recipe)})


def run_cv(
    cfg: CvConfig, log: Callable[[str], None] | None = None, *, device: str = "cpu"
) -> dict[str, Any]:
    """Run (or resume) the cross-fitted protocol; returns the summary written to ``<base>/summary.json``.

    ``device`` (``cpu``, ``cuda`` or ``auto``) is where the label models and readers train; ``cuda`` on a
    machine without one is refused before anything is written.
    """
    device = resolve_device(device)
    say = log or (lambda m: print(m, file=sys.stderr, flush=True))
    run = _open(cfg, say, device)
    _fold_stages(run)
    bdir = _decision_dir(run)
    run.stages.run(f"decision-{bdir.name}", [bdir / "summary.json"], partial(_decision_stage, run, bdir))
    summary: dict[str, Any] = json.loads((bdir / "summary.json").read_text())
    if cfg.final:
        _final_models(run, bdir, summary)
    return summary


def train_entailment_stage(
    cfg: CvConfig, log: Callable[[str], None] | None = None, *, device: str = "cpu"
) -> dict[str, Any]:
    """Train (or resume) only the label model's auxiliary entailment stage, the checkpoint every fold and
    the final model of ``cfg``'s run start from, and stop: a stage of many hours trained over several
    sittings before the folds (on ``device``, as in :func:`run_cv`; a sitting on a GPU and the next on a
    CPU continue one stage). Reads no claim; returns ``ensure_aux_checkpoint``'s record."""
    from sciverify.data.datasets import resolve_data_dir
    from sciverify.data.io import read_corpus
    from sciverify.training.label_config import LabelTrainConfig
    from sciverify.training.label_train import ensure_aux_checkpoint

    device = resolve_device(device)
    say = log or (lambda m: print(m, file=sys.stderr, flush=True))
    label = _part(LABEL, cfg.label_base, cfg, Path(cfg.out_dir) / "models")
    recipe = label.recipe
    if not isinstance(recipe, LabelTrainConfig) or not recipe.aux_checkpoint or not recipe.aux_epochs:
        raise ConfigError(f"label model {cfg.label_base!r} has no shared entailment stage to train alone")
    corpus = read_corpus(resolve_data_dir(cfg.data_dir).corpus)
    say(f"entailment stage of {cfg.label_base} on {device}: {recipe.aux_checkpoint}")
    return ensure_aux_checkpoint(recipe, corpus, progress=True, device=device)


def _final_label(run: _Run, bdir: Path, final_dir: Path) -> None:
    part = run.label
    if copy_twin_label(run.out, run.base, bdir, part.learner.artifact.done):
        run.say(f"final label model copied from a finished run with the same label body ({run.base})")
        return
    report = part.learner.train(part.recipe, Fit(run.claims, [], final_dir / LABEL.name, run.data))
    if report is not None:
        _dump(bdir / f"final-{LABEL.name}.train.json", report, sort_keys=False)


def _final_reader(run: _Run, part: _Part, final_dir: Path) -> None:
    if copy_twin_reader(run.models, run.base, part.name, final_dir, part.learner.artifact.done):
        run.say(f"final reader copied from the run with the reader's full role: "
                f"final-{run_name(run.base, part.name)}")
        return
    part.learner.train(part.recipe, Fit(run.claims, [], final_dir / READER.name, run.data))


def _final_models(run: _Run, bdir: Path, summary: Mapping[str, Any]) -> None:
    """The final selector, label model and reader (those the chosen decision uses), trained on every
    claim, with the decision beside them."""
    final_dir = run.models / f"final-{bdir.name}"
    final_cfg = learned_decision(summary["final_decision"], run.cfg.k)
    run.stages.run(
        f"{final_dir.name}/selector",
        [final_dir / "rationale" / "config.json"],
        partial(_train_selector, run, run.claims, final_dir / "rationale"),
    )
    if final_cfg.uses_label_model:
        done = [final_dir / LABEL.name / run.label.learner.artifact.done]
        step = partial(_final_label, run, bdir, final_dir)
        run.stages.run(f"{final_dir.name}/label-{run.base}", done, step)
    if run.reader is not None and final_cfg.uses_reader:
        part = run.reader
        done = [final_dir / READER.name / part.learner.artifact.done]
        step = partial(_final_reader, run, part, final_dir)
        run.stages.run(f"{final_dir.name}/reader-{part.name}", done, step)
    _finish_final(final_dir, bdir, summary, run.cfg, run.data_files, final_cfg, run.label.learner.predictor)


def copy_twin_label(out: Path, base: str, bdir: Path, marker: str = "model.onnx") -> bool:
    """Give a run the final label model of a finished run with the same label body: the run without a
    reader, else any run with one (another reader or role), in name order.

    All are trained by the same recipe and seed on the same claims, so they are one model: copying
    it saves the ten to thirty minutes retraining would take. True when it was copied."""
    dest = out / "models" / f"final-{bdir.name}" / "label"
    twins = [out / "models" / f"final-{base}", *sorted((out / "models").glob(f"final-{base}+reader-*"))]
    for twin in twins:
        if twin.name == dest.parent.name or not _copy_finished(twin / "label", dest, marker):
            continue
        record = out / twin.name.removeprefix("final-") / "final-label.train.json"
        if record.exists():
            shutil.copyfile(record, bdir / "final-label.train.json")
        return True
    return False


def copy_twin_reader(
    models: Path, base: str, reader: str, final_dir: Path, marker: str = "training.json"
) -> bool:
    """Give a run whose reader only lists the final reader of the run with its full role, when that is
    finished: the roles share the recipe, seed and claims (the role changes the decision, not the
    training), so it is the same model. True when it was copied."""
    twin = models / f"final-{run_name(base, reader)}" / "reader"
    return _copy_finished(twin, final_dir / "reader", marker)


def _copy_finished(twin: Path, dest: Path, marker: str) -> bool:
    """Copy the model directory ``twin`` to ``dest`` when it is another directory and finished (holds
    ``marker``, the file its training writes last). True when it was copied."""
    if twin == dest or not (twin / marker).exists():
        return False
    shutil.copytree(twin, dest, dirs_exist_ok=True)
    return True


def _finish_final(
    final_dir: Path,
    bdir: Path,
    summary: Mapping[str, Any],
    cfg: CvConfig,
    data_files: dict[str, Path],
    decision: DecisionConfig,
    predictor: str,
) -> None:
    """Put the decision chosen on all out-of-fold outputs beside the final models, so the directory has
    the layout of the shipped weights (``sciverify verify --models DIR``), and stamp both model
    directories with a manifest whose metrics are the cross-validated figures."""
    from sciverify.models.artifacts import write_manifest

    tuned = replace(PipelineConfig().with_k(cfg.k), decision=decision, label=predictor)
    tuned.dump_toml(final_dir / "rationale" / PIPELINE_TOML, decision=False)
    dump_decision(decision, final_dir / DECISION_DIR / DECISION_TOML)
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
