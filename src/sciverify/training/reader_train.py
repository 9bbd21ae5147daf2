"""Training the reader: every auxiliary entailment pair first, then SciFact sentences, then int8 ONNX.

Two stages, each resumable to the step (:mod:`sciverify.training.loop`):

1. **Auxiliary** (no SciFact claim, so one run serves every cross-validation fold and the final model):
   all 45,734 pairs of ``../shared/data/aux`` but the PubMedQA ids held out for the cross-domain check,
   stance loss only. On MiniLM, growing this stage from 7.1k to 45.7k pairs raised accuracy after it from
   0.461 to 0.549 (docs/experiments-label.md); the label model of the last release saw 6,420.
2. **SciFact**: the sentences of cited abstracts, rule-negated claims and retrieved hard negatives
   (:mod:`sciverify.training.reader_data`), stance loss with inverse square-root class weights plus the
   rationale loss (binary cross-entropy, positives up-weighted by the square root of the class ratio).

The export is checked against the float graph on real pairs (argmax agreement of the stance, largest
change of P(rationale)) and the figures go into the model's ``training.json``.

Both stages run on ``device`` (``cpu``, ``cuda`` or ``auto``; :mod:`sciverify.training.device`), an
argument beside the recipe that no stamp or key holds: the auxiliary weights serve either device, and
everything written loads on a CPU. ``training.json`` says which device trained the model.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
import shutil
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from sciverify.data.records import Abstract, Claim, doc_key
from sciverify.errors import ConfigError
from sciverify.models.label import encode_pairs, format_evidence
from sciverify.models.reader import ReaderConfig
from sciverify.training.device import resolve_device
from sciverify.training.loop import StagePlan, run_stage
from sciverify.training.reader_data import ReaderExample, aux_examples, scifact_examples

__all__ = [
    "READER_AUX",
    "ReaderTrainConfig",
    "ensure_reader_aux",
    "reader_examples_digest",
    "train_reader",
]

#: Every auxiliary pair, the PubMedQA cross-domain check excepted.
READER_AUX: tuple[tuple[str, int], ...] = (
    ("evidence_inference", 0),
    ("mnli", 0),
    ("snli", 0),
    ("fever_symmetric", 0),
    ("scitail", 0),
    ("pubmedqa_train", 0),
)
TINY_AUX: tuple[tuple[str, int], ...] = (("fever_symmetric", 64), ("evidence_inference", 64))


@dataclass(frozen=True)
class ReaderTrainConfig:
    """Every knob of the reader's recipe; the defaults are the recipe, :meth:`tiny` the CI-sized run.

    ``base`` names the body (:mod:`sciverify.training.bases`); ``aux_sets`` pairs an auxiliary set with its
    pair budget (0 = all). ``max_train_examples`` > 0 keeps a seeded sample of the SciFact examples.
    ``start_checkpoint`` replaces the reader's own auxiliary stage by a label model's finished one (body and
    three-way head, in the format :func:`sciverify.training.label_train.ensure_aux_checkpoint` writes):
    the reader then starts from what that stage read, and ``start_stamp`` is the stamp the file must carry
    (a file made with other settings is refused).
    Where it trains is no knob of the recipe: it is :func:`train_reader`'s ``device``.
    """

    seed: int = 13
    base: str = "mpnet6"
    aux_sets: tuple[tuple[str, int], ...] = READER_AUX
    aux_dir: str | None = None
    aux_epochs: int = 1
    epochs: int = 2
    batch_size: int = 16
    lr_body: float = 5e-5
    lr_head: float = 1e-3
    max_length: int = 128
    rationale_weight: float = 1.0
    negatives_per_claim: int = 2
    sentences_per_negative: int = 3
    negated: bool = True
    max_train_examples: int = 0
    checkpoint_every: int = 100
    log_every: int = 25
    threads: int = 2
    freeze_embeddings: bool = True
    start_checkpoint: str | None = None
    start_stamp: str = ""

    def __post_init__(self) -> None:
        if self.epochs < 0 or self.aux_epochs < 0 or self.batch_size < 1:
            raise ConfigError("reader: epochs and aux_epochs must be >= 0 and batch_size >= 1")
        if self.start_checkpoint and not self.start_stamp:
            raise ConfigError("reader: start_checkpoint needs the stamp it must carry (start_stamp)")

    @classmethod
    def tiny(cls, seed: int = 13) -> ReaderTrainConfig:
        """Minutes on a CPU: MiniLM, 128 auxiliary pairs, a slice of SciFact, one epoch each."""
        return cls(
            seed=seed,
            base="minilm",
            aux_sets=TINY_AUX,
            epochs=1,
            max_train_examples=160,
            checkpoint_every=4,
            log_every=4,
            lr_body=1e-4,
        )


def reader_examples_digest(examples: Sequence[ReaderExample]) -> str:
    """sha256 of the examples' content, in order: a checkpoint made from other data is refused."""
    h = hashlib.sha256()
    for e in examples:
        h.update(f"{e.claim}\x1f{e.title}\x1f{e.sentence}\x1f{e.stance}\x1f{e.rationale}\x1e".encode())
    return h.hexdigest()


def _resolve_aux_dir(config: ReaderTrainConfig) -> Path:
    if config.aux_dir:
        return Path(config.aux_dir)
    from sciverify.data.datasets import resolve_data_dir

    return resolve_data_dir().root.parent / "aux"


def _aux_key(config: ReaderTrainConfig) -> str:
    keys = (
        "seed",
        "base",
        "aux_sets",
        "aux_epochs",
        "batch_size",
        "lr_body",
        "lr_head",
        "max_length",
        "freeze_embeddings",
    )
    text = json.dumps({k: getattr(config, k) for k in keys}, sort_keys=True, default=list)
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def _build(config: ReaderTrainConfig) -> tuple[Any, Any]:
    import torch

    from sciverify.models.label_torch import training_tokenizer
    from sciverify.models.reader_torch import build_reader
    from sciverify.training.bases import base_dir, kept_layers

    torch.set_num_threads(config.threads)
    base = base_dir(config.base)
    model = build_reader(base, keep_layers=kept_layers(config.base), seed=config.seed)
    if config.freeze_embeddings:
        model.body.embeddings.word_embeddings.weight.requires_grad_(False)
    return model, training_tokenizer(base)


def _texts(examples: Sequence[ReaderExample]) -> list[tuple[str, str]]:
    return [(e.claim, format_evidence(e.title, [e.sentence])) for e in examples]


def _loss_fn(
    model: Any,
    tokenizer: Any,
    examples: Sequence[ReaderExample],
    max_length: int,
    stance_weights: Sequence[float] | None,
    rationale_weight: float,
    pos_weight: float,
    device: str,
) -> Callable[[list[int]], Any]:
    """The reader's loss of a batch, its tensors on ``device`` (a resolved one)."""
    import torch

    texts = _texts(examples)
    stance = torch.tensor([e.stance for e in examples])
    rat = torch.tensor([float(e.rationale) for e in examples])
    weight = torch.tensor(stance_weights, device=device) if stance_weights else None
    ce = torch.nn.CrossEntropyLoss(weight=weight)
    bce = torch.nn.BCEWithLogitsLoss(pos_weight=torch.tensor(pos_weight, device=device), reduction="none")

    def loss(batch: list[int]) -> Any:
        feeds = encode_pairs(tokenizer, [texts[i] for i in batch], max_length)
        logits, rat_logit = model(**{k: torch.from_numpy(v).to(device) for k, v in feeds.items()})
        idx = torch.tensor(batch)
        value = ce(logits, stance[idx].to(device))
        target = rat[idx].to(device)
        mask = target >= 0
        if rationale_weight > 0 and bool(mask.any()):
            value = value + rationale_weight * bce(rat_logit[mask], target[mask]).mean()
        return value

    return loss


def _lengths(tokenizer: Any, examples: Sequence[ReaderExample]) -> list[int]:
    return [len(e.ids) for e in tokenizer.encode_batch(_texts(examples))]


def ensure_reader_aux(
    config: ReaderTrainConfig,
    corpus: Sequence[Abstract],
    work_dir: Path,
    *,
    log: Callable[[str], None] = print,
    stop_after: int = 0,
    device: str = "cpu",
) -> Path | None:
    """Run (or resume) the auxiliary stage; the path of its finished weights, None if stopped early.

    The finished file ``aux-<key>.pt`` holds the body and stance head only; ``aux-<key>.state.pt`` is the
    resumable state while the stage runs. ``key`` digests the settings the stage depends on (where it
    runs, ``device`` as in :func:`train_reader`, is not one).
    """
    import torch

    from sciverify.training.aux_pairs import load_aux

    device = resolve_device(device)
    if config.start_checkpoint:
        return _label_stage(config)
    key = _aux_key(config)
    final = work_dir / f"aux-{key}.pt"
    if final.exists():
        return final
    random.seed(config.seed)
    np.random.seed(config.seed)
    model, tokenizer = _build(config)
    pairs = (
        load_aux(_resolve_aux_dir(config), config.aux_sets, corpus, seed=config.seed)
        if config.aux_sets
        else []
    )
    examples = aux_examples(pairs)
    log(f"[reader-aux] {len(examples)} pairs: {dict(Counter(e.source for e in examples))}")
    plan = StagePlan(
        "reader-aux",
        config.aux_epochs,
        config.batch_size,
        config.lr_body,
        config.lr_head,
        seed=config.seed + 1,
        checkpoint_every=config.checkpoint_every,
        log_every=config.log_every,
    )
    state = work_dir / f"aux-{key}.state.pt"
    result = run_stage(
        model,
        _lengths(tokenizer, examples),
        _loss_fn(model, tokenizer, examples, config.max_length, None, 0.0, 1.0, device),
        plan,
        state,
        stamp_extra={"data": reader_examples_digest(examples), "base": config.base},
        log=log,
        stop_after=stop_after,
        device=device,
    )
    if not result["done"]:
        return None
    work_dir.mkdir(parents=True, exist_ok=True)
    partial = final.with_name(final.name + ".partial")
    weights = {k: v for k, v in model.state_dict().items() if not k.startswith("head_rat")}
    torch.save(
        {"key": key, "pairs": len(examples), "final_loss": result["final_loss"], "state": weights}, partial
    )
    partial.replace(final)
    state.unlink(missing_ok=True)
    return final


def _label_stage(config: ReaderTrainConfig) -> Path:
    """The label model's finished entailment stage the reader starts from, its stamp checked."""
    import torch

    path = Path(str(config.start_checkpoint))
    if not path.exists():
        raise ConfigError(
            f"{path}: the entailment stage the reader starts from is not there; train it first "
            "(sciverify train --cv 5 --label-base mpnet6-all --entailment-only) or copy the finished file"
        )
    saved = torch.load(path, weights_only=True, map_location="cpu")
    if saved.get("stamp") != config.start_stamp:
        raise ConfigError(f"{path} was made with other entailment-stage settings than the reader's recipe")
    return path


def _start_key(saved: Mapping[str, Any]) -> str:
    """What names the weights a SciFact stage started from: the reader's own stage key, or a digest of a
    label model's stage stamp."""
    if "key" in saved:
        return str(saved["key"])
    return "label-" + hashlib.sha256(str(saved["stamp"]).encode()).hexdigest()[:12]


def _stance_weights(examples: Sequence[ReaderExample]) -> list[float]:
    counts = np.bincount([e.stance for e in examples], minlength=3).astype(float)
    w = 1.0 / np.sqrt(np.maximum(counts, 1.0))
    return [float(x) for x in w / (w * counts).sum() * counts.sum()]


def train_reader(
    config: ReaderTrainConfig,
    claims: Sequence[Claim],
    corpus: Sequence[Abstract] | Mapping[str, Abstract],
    out_dir: Path,
    work_dir: Path,
    *,
    retrieved: Mapping[str, Sequence[str]] | None = None,
    check: Sequence[ReaderExample] = (),
    log: Callable[[str], None] = print,
    stop_after: int = 0,
    device: str = "cpu",
) -> dict[str, Any] | None:
    """Train the reader on ``claims`` from the auxiliary checkpoint and export it to ``out_dir``.

    Args:
        config: the recipe.
        claims: training claims with gold evidence.
        corpus: the abstracts.
        out_dir: receives ``model.onnx`` (int8), ``tokenizer.json``, ``config.json``, ``training.json``.
        work_dir: resumable state (the auxiliary stage's weights are shared by every call with one config).
        retrieved: retrieved doc ids per claim id, for hard negatives (see
            :func:`~sciverify.training.reader_data.scifact_examples`).
        check: real pairs on which the int8 graph is compared with the float graph (up to 400 are read).
        log: progress lines.
        stop_after: stop after this many steps of the current stage (tests, time-boxed runs).
        device: where both stages run: ``cpu``, ``cuda`` or ``auto``
            (:func:`~sciverify.training.device.resolve_device`); the report records the one used.

    Returns:
        The training report (also written as ``training.json``), or None when stopped before the end.

    Raises:
        ConfigError: the device is unknown or not on this machine; the auxiliary weights do not fit the body.
    """
    import torch

    from sciverify.models.reader_torch import export_reader_onnx
    from sciverify.training.bases import base_dir

    device = resolve_device(device)
    t0 = time.time()
    docs = corpus if isinstance(corpus, Mapping) else {doc_key(a.doc_id): a for a in corpus}
    aux = ensure_reader_aux(
        config, list(docs.values()), work_dir, log=log, stop_after=stop_after, device=device
    )
    if aux is None:
        return None
    examples = scifact_examples(
        claims,
        docs,
        seed=config.seed,
        retrieved=retrieved,
        negatives_per_claim=config.negatives_per_claim,
        sentences_per_negative=config.sentences_per_negative,
        negated=config.negated,
    )
    if config.max_train_examples and len(examples) > config.max_train_examples:
        examples = random.Random(config.seed).sample(examples, config.max_train_examples)
    model, tokenizer = _build(config)
    saved = torch.load(aux, weights_only=True, map_location="cpu")
    missing = model.load_state_dict(saved["state"], strict=False).missing_keys
    if any(not k.startswith("head_rat") for k in missing):
        raise ConfigError(f"{aux} does not match the reader's body: missing {missing[:3]}")
    start_key = _start_key(saved)
    stance_w = _stance_weights(examples)
    pos = sum(1 for e in examples if e.rationale == 1)
    neg = sum(1 for e in examples if e.rationale == 0)
    pos_weight = math.sqrt(neg / pos) if pos else 1.0
    digest = reader_examples_digest(examples)
    plan = StagePlan(
        "reader-scifact",
        config.epochs,
        config.batch_size,
        config.lr_body,
        config.lr_head,
        seed=config.seed + 2,
        checkpoint_every=config.checkpoint_every,
        log_every=config.log_every,
    )
    log(f"[reader] {len(examples)} SciFact examples: {dict(Counter(e.source for e in examples))}")
    # the starting weights name the state too: two readers of one fold share the examples
    state = work_dir / f"scifact-{start_key}-{digest[:12]}.state.pt"
    result = run_stage(
        model,
        _lengths(tokenizer, examples),
        _loss_fn(
            model,
            tokenizer,
            examples,
            config.max_length,
            stance_w,
            config.rationale_weight,
            pos_weight,
            device,
        ),
        plan,
        state,
        stamp_extra={"data": digest, "aux": start_key, "rationale_weight": config.rationale_weight},
        log=log,
        stop_after=stop_after,
        device=device,
    )
    if not result["done"]:
        return None
    out_dir.mkdir(parents=True, exist_ok=True)
    export_reader_onnx(model, out_dir / "model.onnx", keep_float=True)
    shutil.copyfile(base_dir(config.base) / "tokenizer.json", out_dir / "tokenizer.json")
    (out_dir / "config.json").write_text(
        json.dumps(ReaderConfig(max_length=config.max_length).to_json(), indent=2) + "\n", encoding="utf-8"
    )
    from sciverify.models.conformance import write_canaries

    write_canaries(out_dir, "reader")
    report: dict[str, Any] = {
        "config": asdict(config),
        "device": device,
        "aux_checkpoint": aux.name,
        "aux_pairs": saved.get("pairs"),
        "start": start_key,
        "examples": dict(Counter(e.source for e in examples)),
        "examples_sha256": digest,
        "stance_weights": stance_w,
        "rationale_pos_weight": pos_weight,
        "scifact_stage": result,
        "int8_check": int8_agreement(out_dir, check[:400]),
        "seconds": time.time() - t0,
    }
    (out_dir / "model.fp32.onnx").unlink(missing_ok=True)
    (out_dir / "training.json").write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    state.unlink(missing_ok=True)
    return report


def int8_agreement(out_dir: Path, pairs: Sequence[ReaderExample]) -> dict[str, float]:
    """How closely the int8 graph follows the float graph beside it (``model.fp32.onnx``) on real pairs:
    stance argmax agreement, rationale decision (0.5) agreement and the largest change of P(rationale)."""
    from sciverify.models.reader import ReaderModel

    if not pairs:
        return {"pairs": 0.0}
    int8 = ReaderModel.load(out_dir)
    fp32_dir = out_dir / "fp32-check"
    fp32_dir.mkdir(exist_ok=True)
    for name in ("tokenizer.json", "config.json"):
        shutil.copyfile(out_dir / name, fp32_dir / name)
    shutil.copyfile(out_dir / "model.fp32.onnx", fp32_dir / "model.onnx")
    try:
        fp32 = ReaderModel.load(fp32_dir)
        a = np.stack([int8.read_one(p.claim, p.title, p.sentence) for p in pairs])
        b = np.stack([fp32.read_one(p.claim, p.title, p.sentence) for p in pairs])
    finally:
        shutil.rmtree(fp32_dir, ignore_errors=True)
    return {
        "pairs": float(len(pairs)),
        "stance_argmax_agreement": float(np.mean(a[:, :3].argmax(1) == b[:, :3].argmax(1))),
        "rationale_agreement": float(np.mean((a[:, 3] >= 0.5) == (b[:, 3] >= 0.5))),
        "max_abs_rationale_change": float(np.max(np.abs(a[:, 3] - b[:, 3]))),
        "mean_abs_prob_change": float(np.mean(np.abs(a - b))),
    }
