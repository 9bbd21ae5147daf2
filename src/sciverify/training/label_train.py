"""Training the label model: auxiliary entailment first, then SciFact, then int8 ONNX export.

The body (all-MiniLM-L6-v2) was trained as a bi-encoder, so a fresh 3-way head on a cross-encoded pair
learns little at the usual fine-tuning rate: with SciFact alone the model stays at the base rate and never
predicts CONTRADICT. Three things fix that here: the head gets its own much higher learning rate, a first
stage on auxiliary entailment pairs teaches the body to compare two segments, and the SciFact stage
weights classes by inverse square-root frequency so the rare CONTRADICT counts. Batches are grouped by
length (dynamic padding), which matters on a CPU.

Both stages run through the resumable loop of :mod:`sciverify.training.loop`: mpnet6's aux stage takes
about 20 minutes on two cores, longer than a process can be trusted to live, so each stage checkpoints its
model, optimizer, schedule and torch's random state every ``checkpoint_every`` steps, and a rerun goes on
from the last one to the weights an uninterrupted run ends with (same batches, same dropout masks).

``device`` (``cpu``, ``cuda`` or ``auto``; :mod:`sciverify.training.device`) says where both stages run.
It is an argument beside the recipe, not a field of it: no stamp holds it, so a finished auxiliary
checkpoint serves a run on either device, and everything written loads on a CPU.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import shutil
import sys
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np

from sciverify.data.records import Abstract, Claim, doc_key
from sciverify.errors import ConfigError
from sciverify.models.label import LabelModel, LabelModelConfig, encode_pairs
from sciverify.training.aux_pairs import load_aux
from sciverify.training.device import resolve_device
from sciverify.training.label_config import LabelTrainConfig
from sciverify.training.label_data import LabelPair, NeiSentencePicker, scifact_eval_pairs, scifact_pairs
from sciverify.training.label_eval import brief, evaluate_pairs, pairs_text, predict_torch
from sciverify.training.loop import StagePlan, run_stage

__all__ = ["AUX_STAGE", "SCIFACT_STAGE", "aux_stamp", "ensure_aux_checkpoint", "train_label_model"]

#: The SciFact stage's resumable state, inside the output directory until the model is exported.
SCIFACT_STAGE = "scifact-stage.pt"
#: The aux stage's resumable state inside the output directory, when no ``aux_checkpoint`` is named.
AUX_STAGE = "aux-stage.pt"


def _log(progress: bool, msg: str) -> None:
    if progress:
        print(msg, file=sys.stderr, flush=True)


def _pairs_digest(pairs: Sequence[LabelPair]) -> str:
    """sha256 of the pairs' texts and labels, in order: a stage checkpoint made from other data is refused."""
    h = hashlib.sha256()
    for p in pairs:
        h.update(json.dumps([p.claim, p.title, list(p.sentences), p.label]).encode() + b"\n")
    return h.hexdigest()


def _label_stage(
    model: Any,
    tokenizer: Any,
    pairs: Sequence[LabelPair],
    *,
    name: str,
    epochs: int,
    max_length: int,
    config: LabelTrainConfig,
    class_weights: Sequence[float] | None,
    seed: int,
    checkpoint: Path,
    reseed_torch: bool,
    progress: bool,
    stop_after: int,
    device: str,
) -> dict[str, float] | None:
    """One stage through the resumable loop (:func:`sciverify.training.loop.run_stage`): cross-entropy over
    the pairs' labels weighted by ``class_weights``, checkpointed to ``checkpoint`` every
    ``config.checkpoint_every`` steps, on ``device`` (a resolved one). None when ``stop_after`` stopped it
    before the end.

    The checkpoint's stamp holds what the trajectory depends on beyond the plan (body, window, the pairs'
    digest, class weights, and the aux-stage settings that fix the weights the stage starts from), so a
    checkpoint made with other data or another start is refused.
    """
    import torch

    if not pairs or epochs == 0:
        return {"pairs": float(len(pairs)), "steps": 0.0, "seconds": 0.0}
    texts = pairs_text(pairs)
    labels = [p.label for p in pairs]
    lengths = [len(e.ids) for e in tokenizer.encode_batch(texts)]
    weight = torch.tensor(class_weights, dtype=torch.float32, device=device) if class_weights else None
    loss_fn = torch.nn.CrossEntropyLoss(weight=weight)

    def loss_of_batch(batch: list[int]) -> Any:
        feeds = encode_pairs(tokenizer, [texts[i] for i in batch], max_length)
        logits = model(**{k: torch.from_numpy(v).to(device) for k, v in feeds.items()})
        return loss_fn(logits, torch.tensor([labels[i] for i in batch], device=device))

    plan = StagePlan(
        name,
        epochs,
        config.batch_size,
        config.lr_body,
        config.lr_head,
        config.warmup,
        config.weight_decay,
        seed,
        config.checkpoint_every,
        config.log_every,
    )
    stamp = {
        "base": config.base,
        "max_length": max_length,
        "pairs": len(pairs),
        "data": _pairs_digest(pairs),
        "class_weights": [float(w) for w in class_weights] if class_weights else None,
        "start": aux_stamp(config),
    }
    result = run_stage(
        model,
        lengths,
        loss_of_batch,
        plan,
        checkpoint,
        stamp_extra=stamp,
        log=lambda line: _log(progress, line),
        stop_after=stop_after,
        reseed_torch=reseed_torch,
        device=device,
    )
    if not result["done"]:
        return None
    return {
        "pairs": float(len(pairs)),
        "steps": result["steps"],
        "seconds": result["seconds"],
        "final_loss": result["final_loss"],
    }


def _aux_stage(
    model: Any,
    tokenizer: Any,
    aux: Sequence[LabelPair],
    config: LabelTrainConfig,
    checkpoint: Path,
    progress: bool,
    stop_after: int = 0,
    device: str = "cpu",
) -> dict[str, float] | None:
    """The auxiliary entailment stage: unweighted classes, its own window and batch seed. Torch's generator
    is not reseeded on a fresh start: the stage's dropout masks have always followed the model's
    construction (after ``torch.manual_seed(config.seed)``), and the shipped models were trained so."""
    return _label_stage(
        model,
        tokenizer,
        aux,
        name="aux",
        epochs=config.aux_epochs,
        max_length=config.aux_max_length,
        config=config,
        class_weights=None,
        seed=config.seed + 1,
        checkpoint=checkpoint,
        reseed_torch=False,
        progress=progress,
        stop_after=stop_after,
        device=device,
    )


def _aux_stage_file(config: LabelTrainConfig, out_dir: Path) -> Path:
    """Where the aux stage's resumable state lives while it runs: beside the finished aux checkpoint
    (``<aux_checkpoint>.stage``), or in the output directory when the run names none."""
    if config.aux_checkpoint:
        checkpoint = Path(config.aux_checkpoint)
        return checkpoint.with_name(checkpoint.name + ".stage")
    return out_dir / AUX_STAGE


def aux_stamp(config: LabelTrainConfig) -> str:
    """The settings the aux stage depends on, to refuse a checkpoint made with others (where it ran is
    not one: the device is no field of the recipe, and a finished checkpoint serves either device)."""
    keys = (
        "seed",
        "aux_sets",
        "aux_dir",
        "aux_epochs",
        "aux_max_length",
        "batch_size",
        "lr_body",
        "lr_head",
        "warmup",
        "weight_decay",
        "freeze_embeddings",
        "base",
        "trainable_layers",
    )
    values = {k: getattr(config, k) for k in keys}
    from sciverify.training.bases import BODIES

    if BODIES.get(config.base).legacy_stamp:  # checkpoints written before these settings existed stay valid
        values.pop("base")
        if not config.trainable_layers:
            values.pop("trainable_layers")
    return json.dumps(values, sort_keys=True, default=list)


def _resolve_aux_dir(config: LabelTrainConfig) -> Path:
    if config.aux_dir:
        return Path(config.aux_dir)
    from sciverify.data.datasets import resolve_data_dir

    return resolve_data_dir().root.parent / "aux"


def train_label_model(
    config: LabelTrainConfig,
    train_claims: Sequence[Claim],
    corpus: Mapping[str, Abstract] | Sequence[Abstract],
    out_dir: Path | str,
    *,
    val_claims: Sequence[Claim] | None = None,
    progress: bool = True,
    stop_after: int = 0,
    device: str = "cpu",
) -> dict[str, Any] | None:
    """Train, export ``out_dir/{model.onnx,tokenizer.json,config.json}`` and return metrics.

    Metrics hold pair counts, seconds per stage (in this process), the device the stages ran on
    (``device``: ``cpu``, ``cuda`` or ``auto``, :func:`~sciverify.training.device.resolve_device`), and
    with ``val_claims`` the validation metrics of the float torch model after the aux stage and at the
    end, and of the exported (int8) ONNX model. A killed run called again with the same arguments resumes
    inside the stage it was in (:data:`SCIFACT_STAGE`, :func:`_aux_stage_file`), on either device; the
    stage files are deleted once the model is exported. ``stop_after`` > 0 stops (after checkpointing)
    once the current stage has taken that many steps, and returns None (tests of resumption, time-boxed
    runs).
    """
    import torch

    from sciverify.models.label_torch import (
        build_classifier,
        export_onnx,
        freeze_lower_layers,
        training_tokenizer,
    )
    from sciverify.training.bases import base_dir, kept_layers

    device = resolve_device(device)
    t0 = time.time()
    random.seed(config.seed)
    np.random.seed(config.seed)
    torch.manual_seed(config.seed)
    torch.set_num_threads(config.threads)
    out_dir = Path(out_dir)
    docs = corpus if isinstance(corpus, Mapping) else {doc_key(a.doc_id): a for a in corpus}
    picker = NeiSentencePicker(docs.values())
    sci = scifact_pairs(
        train_claims,
        docs,
        seed=config.seed,
        picker=picker,
        retrieved_negatives=config.retrieved_negatives,
        negated=config.negation_augment,
        per_set=config.per_set,
        mixed=config.mixed,
        negated_nei=config.negated_nei,
    )
    random.Random(config.seed).shuffle(sci)
    if config.max_train_pairs:
        sci = sci[: config.max_train_pairs]
    aux = (
        load_aux(_resolve_aux_dir(config), config.aux_sets, docs.values(), seed=config.seed)
        if config.aux_sets
        else []
    )
    val = (
        scifact_eval_pairs(val_claims, docs, picker=picker, k=config.eval_k, retrieved=True)
        if val_claims
        else []
    )
    if config.max_val_pairs and len(val) > config.max_val_pairs:
        val = random.Random(config.seed).sample(val, config.max_val_pairs)
    metrics: dict[str, Any] = {
        "config": asdict(config),
        "device": device,
        "scifact_pairs": dict(Counter(p.source for p in sci)),
        "scifact_labels": [sum(1 for p in sci if p.label == k) for k in range(3)],
        "aux_pairs": dict(Counter(p.source for p in aux)),
    }
    _log(progress, f"pairs: scifact {len(sci)} {metrics['scifact_labels']}, aux {len(aux)}, val {len(val)}")

    base = base_dir(config.base)
    tokenizer = training_tokenizer(base)
    model = build_classifier(base, seed=config.seed, keep_layers=kept_layers(config.base))
    if config.freeze_embeddings:
        model.body.embeddings.word_embeddings.weight.requires_grad_(False)
    metrics["trainable_layers"] = freeze_lower_layers(model, config.trainable_layers)

    checkpoint = Path(config.aux_checkpoint) if config.aux_checkpoint else None
    aux_state = _aux_stage_file(config, out_dir)
    stamp = aux_stamp(config)
    if checkpoint is not None and checkpoint.exists():
        saved = torch.load(checkpoint, weights_only=True, map_location="cpu")
        if saved.get("stamp") != stamp:
            raise ConfigError(
                f"{checkpoint} was made with other aux-stage settings; delete it or pick another path"
            )
        model.load_state_dict(saved["state"])
        metrics["aux_stage"] = {"checkpoint": str(checkpoint)}
        _log(progress, f"[aux] loaded {checkpoint}")
    else:
        aux_stage = _aux_stage(model, tokenizer, aux, config, aux_state, progress, stop_after, device)
        if aux_stage is None:
            return None
        metrics["aux_stage"] = aux_stage
        if checkpoint is not None:
            _save_aux(checkpoint, stamp, model)
            aux_state.unlink(missing_ok=True)
    if val and aux and config.aux_epochs and config.eval_torch:
        metrics["val_after_aux"] = evaluate_pairs(
            predict_torch(model, tokenizer, val, config.max_length), val
        )
        _log(progress, f"val after aux: {brief(metrics['val_after_aux'])}")
    weights = None
    if config.class_weighting == "sqrt_inverse" and sci:
        counts = np.bincount([p.label for p in sci], minlength=3).astype(float)
        w = 1.0 / np.sqrt(np.maximum(counts, 1.0))
        weights = list(w / (w * counts).sum() * counts.sum())
    metrics["class_weights"] = weights
    scifact_state = out_dir / SCIFACT_STAGE
    # reseeding torch's generator makes a run from an aux checkpoint equal one without
    scifact_stage = _label_stage(
        model,
        tokenizer,
        sci,
        name="scifact",
        epochs=config.epochs,
        max_length=config.max_length,
        config=config,
        class_weights=weights,
        seed=config.seed + 2,
        checkpoint=scifact_state,
        reseed_torch=True,
        progress=progress,
        stop_after=stop_after,
        device=device,
    )
    if scifact_stage is None:
        return None
    metrics["scifact_stage"] = scifact_stage
    if val and config.eval_torch:
        metrics["val_torch"] = evaluate_pairs(predict_torch(model, tokenizer, val, config.max_length), val)
        _log(progress, f"val (torch fp32): {brief(metrics['val_torch'])}")

    out_dir.mkdir(parents=True, exist_ok=True)
    export_onnx(
        model,
        out_dir / "model.onnx",
        quantize=config.quantize,
        per_channel=config.quant_per_channel,
        keep_float=config.keep_float_onnx,
    )
    shutil.copyfile(base / "tokenizer.json", out_dir / "tokenizer.json")
    (out_dir / "config.json").write_text(
        json.dumps(LabelModelConfig(max_length=config.max_length).to_json(), indent=2) + "\n",
        encoding="utf-8",
    )
    if config.quantize:
        from sciverify.models.conformance import write_canaries

        write_canaries(out_dir, "label")
    scifact_state.unlink(missing_ok=True)  # ~0.6 GB for mpnet6: never shipped
    if not config.aux_checkpoint:  # the aux stage's state lived in out_dir too
        aux_state.unlink(missing_ok=True)
    if val:
        onnx_model = LabelModel.load(out_dir, threads=config.threads)
        probs = np.zeros((len(val), 3), dtype=np.float32)
        for i, p in enumerate(val):
            probs[i] = onnx_model.predict(p.claim, [(p.title, p.sentences)])[0]
        metrics["val_onnx"] = evaluate_pairs(probs, val)
        _log(progress, f"val (onnx{' int8' if config.quantize else ''}): {brief(metrics['val_onnx'])}")
    metrics["seconds"] = time.time() - t0
    return metrics


def ensure_aux_checkpoint(
    config: LabelTrainConfig,
    corpus: Mapping[str, Abstract] | Sequence[Abstract],
    *,
    progress: bool = True,
    stop_after: int = 0,
    device: str = "cpu",
) -> dict[str, Any]:
    """Run only the auxiliary stage and write ``config.aux_checkpoint`` (skipped when it exists).

    The stage sees no SciFact claim, so one checkpoint serves every cross-validation fold and the final
    model; :func:`train_label_model` then loads it. A process training it holds ``<checkpoint>.lock``
    (its pid); another one waits for the checkpoint instead of training it twice, unless that pid is gone.
    While it trains, ``<checkpoint>.stage`` holds the resumable state, so a killed process's successor
    goes on from its last step checkpoint. ``stop_after`` as in :func:`train_label_model` (the result then
    says ``"stopped": True`` and no checkpoint is written); ``device`` as in :func:`train_label_model`.
    """
    if not config.aux_checkpoint:
        raise ConfigError("ensure_aux_checkpoint needs config.aux_checkpoint")
    device = resolve_device(device)
    checkpoint = Path(config.aux_checkpoint)
    lock = checkpoint.with_name(checkpoint.name + ".lock")
    while lock.exists() and not checkpoint.exists() and _alive(lock):
        time.sleep(10)
    if checkpoint.exists():
        return {"checkpoint": str(checkpoint), "skipped": True}
    checkpoint.parent.mkdir(parents=True, exist_ok=True)
    lock.write_text(str(os.getpid()), encoding="utf-8")
    try:
        return _train_aux(config, corpus, checkpoint, progress, stop_after, device)
    finally:
        lock.unlink(missing_ok=True)


def _alive(lock: Path) -> bool:
    """Whether the process named in a lock file still runs."""
    try:
        os.kill(int(lock.read_text(encoding="utf-8").strip()), 0)
    except (OSError, ValueError):
        return False
    return True


def _train_aux(
    config: LabelTrainConfig,
    corpus: Mapping[str, Abstract] | Sequence[Abstract],
    checkpoint: Path,
    progress: bool,
    stop_after: int,
    device: str,
) -> dict[str, Any]:
    import torch

    from sciverify.models.label_torch import build_classifier, freeze_lower_layers, training_tokenizer
    from sciverify.training.bases import base_dir, kept_layers

    random.seed(config.seed)
    np.random.seed(config.seed)
    torch.manual_seed(config.seed)
    torch.set_num_threads(config.threads)
    docs = list(corpus.values()) if isinstance(corpus, Mapping) else list(corpus)
    aux = load_aux(_resolve_aux_dir(config), config.aux_sets, docs, seed=config.seed)
    base = base_dir(config.base)
    tokenizer = training_tokenizer(base)
    model = build_classifier(base, seed=config.seed, keep_layers=kept_layers(config.base))
    if config.freeze_embeddings:
        model.body.embeddings.word_embeddings.weight.requires_grad_(False)
    freeze_lower_layers(model, config.trainable_layers)
    state = _aux_stage_file(config, checkpoint.parent)
    stage = _aux_stage(model, tokenizer, aux, config, state, progress, stop_after, device)
    if stage is None:
        return {"checkpoint": str(checkpoint), "stopped": True}
    _save_aux(checkpoint, aux_stamp(config), model)
    state.unlink(missing_ok=True)
    pairs = dict(Counter(p.source for p in aux))
    return {"checkpoint": str(checkpoint), "aux_pairs": pairs, "device": device, **stage}


def _save_aux(checkpoint: Path, stamp: str, model: Any) -> None:
    """The finished aux checkpoint (body and head, with the aux settings' stamp), written atomically
    (``model`` is on the CPU: :func:`~sciverify.training.loop.run_stage` hands it back there)."""
    import torch

    checkpoint.parent.mkdir(parents=True, exist_ok=True)
    partial = checkpoint.with_name(checkpoint.name + ".partial")
    torch.save({"stamp": stamp, "state": model.state_dict()}, partial)
    partial.replace(checkpoint)
