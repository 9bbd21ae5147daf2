"""Training the sentence scorer: a MiniLM cross-encoder for "is this sentence a rationale for the claim".

Rows are (claim, sentence) pairs from the training claims: positives are the sentences of gold
rationales; negatives are the other sentences of the evidence abstracts, every sentence of cited
abstracts without evidence, and (``hard_negative_docs``) the sentences of the best-ranked retrieved
abstracts that are not evidence, because those are the near misses met at query time. With
``negation_augment`` each claim with evidence is repeated negated: a sentence that contradicts a claim
is as much its rationale as one that supports it, so the scorer must not learn that "not" means
"irrelevant". The recipe of the label model (separate head learning rate, mean pooling, length-grouped
batches) carries over: a fresh head over a bi-encoder body needs it (docs/experiments-label.md).
"""

from __future__ import annotations

import json
import random
import shutil
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from sciverify.data.records import Claim
from sciverify.errors import ArtifactError, ConfigError
from sciverify.models.sentence_scorer import SentenceScorer, SentenceScorerConfig
from sciverify.training.label_data import LabelPair
from sciverify.training.rationale_train import CorpusView, gold_and_cited_rows

__all__ = ["ScorerTrainConfig", "scorer_pairs", "train_sentence_scorer"]


@dataclass(frozen=True)
class ScorerTrainConfig:
    """Every knob of one run; the defaults are the shipped recipe and :meth:`tiny` is the CI run.

    ``hard_negative_docs`` and ``negation_augment`` are off in the shipped recipe: they triple the rows
    (and the training time), and end to end they lost 2.2 points of objective
    (docs/experiments-rationale.md §5). ``keep_float_onnx`` keeps the float graph beside the int8 one,
    as in ``LabelTrainConfig``. ``body_checkpoint`` is a label model's aux-stage checkpoint
    (``LabelTrainConfig.aux_checkpoint``) whose body, already trained on entailment pairs, starts the
    scorer in place of the bi-encoder weights; the 2-way head is fresh either way."""

    seed: int = 13
    epochs: int = 2
    max_length: int = 96
    batch_size: int = 32
    lr_body: float = 5e-5
    lr_head: float = 1e-3
    warmup: float = 0.06
    weight_decay: float = 0.01
    positive_weight: float = 2.0
    hard_negative_docs: int = 0
    negation_augment: bool = False
    max_claims: int = 0
    freeze_embeddings: bool = True
    threads: int = 2
    quant_per_channel: bool = True
    keep_float_onnx: bool = False
    body_checkpoint: str | None = None
    log_every: int = 100

    def __post_init__(self) -> None:
        if self.epochs < 0 or self.batch_size < 1 or self.hard_negative_docs < 0:
            raise ConfigError("epochs and hard_negative_docs must be >= 0 and batch_size >= 1")
        if not 16 <= self.max_length <= 512:
            raise ConfigError("max_length must be in [16, 512]")
        if self.positive_weight <= 0:
            raise ConfigError("positive_weight must be > 0")

    @classmethod
    def tiny(cls, seed: int = 13) -> ScorerTrainConfig:
        """About a minute: 24 claims, one epoch, short inputs."""
        return cls(seed=seed, epochs=1, max_length=48, max_claims=24, hard_negative_docs=0, log_every=1000)


def scorer_pairs(
    claims: Sequence[Claim],
    corpus: CorpusView,
    *,
    hard_negative_docs: int = 0,
    retrieve: Callable[[str, int], Sequence[int]] | None = None,
    negate: Callable[[str], str | None] | None = None,
) -> list[LabelPair]:
    """(claim, sentence) rows with label 1 for rationale sentences, 0 otherwise (see the module docstring).

    ``retrieve(claim, n)`` returns corpus rows best first; the first ``hard_negative_docs`` rows that are
    neither evidence nor cited become negatives. ``negate(claim)`` returns a negated claim or None.
    """
    pairs: list[LabelPair] = []
    for claim in claims:
        rows = gold_and_cited_rows(claim, corpus)
        known = set(rows)
        if hard_negative_docs:
            if retrieve is None:
                raise ConfigError("hard_negative_docs needs a retriever")
            candidates = retrieve(claim.text, hard_negative_docs + len(known))
            for row in [r for r in candidates if r not in known][:hard_negative_docs]:
                rows[row] = set()
        texts = [claim.text]
        if negate is not None and claim.evidence:
            negated = negate(claim.text)
            if negated:
                texts.append(negated)
        for text in texts:
            for row, positives in rows.items():
                for i, sentence in enumerate(corpus.sentences(row)):
                    source = "rationale" if i in positives else "other"
                    pairs.append(LabelPair(text, "", (sentence,), int(i in positives), source))
    return pairs


def load_body(model: Any, checkpoint: Path) -> None:
    """Copy the body (not the head) of a label-model checkpoint into ``model``.

    A body that has read premise-hypothesis pairs in one pass should start closer to "does this sentence
    bear on this claim" than the bi-encoder it came from. Measured (docs/experiments-rationale.md §9):
    better selection on gold abstracts, no end-to-end gain, so the shipped recipe does not use it.
    """
    import torch

    if not checkpoint.is_file():
        raise ArtifactError(
            f"body checkpoint {checkpoint} not found (the label model's aux_checkpoint writes one)"
        )
    saved = torch.load(checkpoint, weights_only=True)
    state = saved.get("state") if isinstance(saved, dict) else None
    body = {k[len("body.") :]: v for k, v in (state or {}).items() if k.startswith("body.")}
    if not body:
        raise ArtifactError(f"{checkpoint} holds no body weights")
    model.body.load_state_dict(body)


def train_sentence_scorer(
    config: ScorerTrainConfig,
    train_claims: Sequence[Claim],
    corpus: CorpusView,
    out_dir: Path | str,
    *,
    retrieve: Callable[[str, int], Sequence[int]] | None = None,
    progress: bool = True,
) -> dict[str, Any]:
    """Train, export ``out_dir/{model.onnx,tokenizer.json,config.json}`` (int8) and return metrics."""
    import torch

    from sciverify.models.label_torch import base_model_dir, build_classifier, export_onnx, training_tokenizer
    from sciverify.training.label_train import LabelTrainConfig, _run_stage
    from sciverify.training.negation import negate

    t0 = time.time()
    random.seed(config.seed)
    np.random.seed(config.seed)
    torch.manual_seed(config.seed)
    torch.set_num_threads(config.threads)
    neg_rng = random.Random(config.seed)
    claims = [c for c in train_claims if c.evidence or c.cited_doc_ids]
    if config.max_claims:
        claims = claims[: config.max_claims]
    pairs = scorer_pairs(
        claims,
        corpus,
        hard_negative_docs=config.hard_negative_docs,
        retrieve=retrieve,
        negate=(lambda text: negate(text, neg_rng)) if config.negation_augment else None,
    )
    n_pos = sum(p.label for p in pairs)
    if progress:
        print(f"scorer pairs: {len(pairs)} ({n_pos} rationale) from {len(claims)} claims", file=sys.stderr)
    base = base_model_dir()
    tokenizer = training_tokenizer(base)
    model = build_classifier(base, seed=config.seed, num_labels=2)
    if config.body_checkpoint:
        load_body(model, Path(config.body_checkpoint))
    if config.freeze_embeddings:
        model.body.embeddings.word_embeddings.weight.requires_grad_(False)
    stage_cfg = LabelTrainConfig(
        batch_size=config.batch_size,
        lr_body=config.lr_body,
        lr_head=config.lr_head,
        warmup=config.warmup,
        weight_decay=config.weight_decay,
        log_every=config.log_every,
    )
    stage = _run_stage(
        model,
        tokenizer,
        pairs,
        epochs=config.epochs,
        max_length=config.max_length,
        config=stage_cfg,
        class_weights=[1.0, config.positive_weight],
        seed=config.seed + 1,
        name="scorer",
        progress=progress,
    )
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    export_onnx(
        model,
        out_dir / "model.onnx",
        quantize=True,
        per_channel=config.quant_per_channel,
        keep_float=config.keep_float_onnx,
    )
    shutil.copyfile(base / "tokenizer.json", out_dir / "tokenizer.json")
    (out_dir / "config.json").write_text(
        json.dumps(SentenceScorerConfig(max_length=config.max_length).to_json(), indent=2) + "\n",
        encoding="utf-8",
    )
    SentenceScorer.load(out_dir)  # fail here, not at query time, if the export is unreadable
    return {
        "config": asdict(config),
        "claims": len(claims),
        "pairs": len(pairs),
        "positives": n_pos,
        "stage": stage,
        "seconds": round(time.time() - t0, 1),
    }
