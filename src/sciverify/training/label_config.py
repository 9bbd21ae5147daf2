"""The label model's training recipe: every knob of one run, validated where it is made.

Kept apart from the training code (:mod:`sciverify.training.label_train`) so that the cross-validation's
plan and its learners can name and record a recipe without importing the training loop.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sciverify.errors import ConfigError

__all__ = ["DEFAULT_AUX", "LabelTrainConfig"]

#: Every auxiliary pair, 45,734 (recipe 7 of docs/experiments-label.md): against the 18,823-pair mix of
#: recipe 5 (all biomedical and fact-checking pairs, samples of the general NLI sets) the int8 model tells
#: SUPPORT from CONTRADICT better (CONTRADICT F1 0.527 -> 0.590), and end to end (out of fold) abstract
#: label-only F1 rises 0.596 -> 0.653 while the two headline F1s stay within the noise.
DEFAULT_AUX = (
    ("evidence_inference", 0),
    ("mnli", 0),
    ("snli", 0),
    ("fever_symmetric", 0),
    ("scitail", 0),
    ("pubmedqa", 0),
)


@dataclass(frozen=True)
class LabelTrainConfig:
    """Every knob of one training run. The defaults are MiniLM's standalone recipe
    (docs/experiments-label.md); the shipped model's recipe is the cross-validated one built on them
    (:func:`sciverify.training.cv.plan.label_recipe`); :meth:`tiny` is the CI run.

    ``aux_sets`` pairs a set name (see ``aux_pairs.AUX_LOADERS``) with its pair budget (0 = all);
    ``aux_dir`` None means ``<SciFact data dir>/../aux``. ``max_train_pairs`` > 0 slices the SciFact
    pairs (after shuffling) and ``max_val_pairs`` > 0 samples the validation pairs, for quick runs;
    ``eval_torch`` also scores the float model after each stage (the int8 export is always scored).
    ``negation_augment`` adds negated-claim pairs (``label_data.scifact_pairs(negated=True)``).
    ``aux_checkpoint`` names a file for the body and head after the aux stage: written when missing,
    loaded (and the aux stage skipped) when present and made with the same aux settings, so recipes
    that differ only in the SciFact stage share the slow first stage. The torch generator is reseeded
    before the SciFact stage, so a run from a checkpoint equals a run without one.
    ``checkpoint_every``: steps between a stage's resumable checkpoints (:mod:`sciverify.training.loop`).
    The aux stage's lives beside the finished one as ``<aux_checkpoint>.stage`` (``out_dir/aux-stage.pt``
    when no ``aux_checkpoint`` is named) and goes once that is written; the SciFact stage's is
    ``out_dir/scifact-stage.pt``, deleted with the aux one in ``out_dir`` once the model is exported
    (the weights and AdamW's two moments: about 0.6 GB for mpnet6). Checkpoints do not change the trajectory:
    a resumed run ends with the weights of an uninterrupted one.
    ``base`` names the body (:data:`sciverify.training.bases.BASES`); ``trainable_layers`` > 0 trains only
    the top that many transformer layers (and the head) in both stages. ``per_set``, ``mixed`` and
    ``negated_nei`` choose SciFact pair kinds (``label_data.scifact_pairs``).
    In training, ``max_length`` and ``aux_max_length`` clip the claim to half of them, and every pair
    is then cut to ``label_torch.TRAINING_WINDOW`` (128) tokens; the exported model reads ``max_length``
    tokens (docs/experiments-label.md compares windows 128, 192 and 512 at inference).
    """

    seed: int = 13
    aux_sets: tuple[tuple[str, int], ...] = DEFAULT_AUX
    aux_dir: str | None = None
    aux_epochs: int = 1
    aux_max_length: int = 128
    max_length: int = 192
    epochs: int = 3
    batch_size: int = 16
    lr_body: float = 6e-5
    lr_head: float = 1.5e-3
    warmup: float = 0.06
    weight_decay: float = 0.01
    class_weighting: str = "sqrt_inverse"  # or "none"
    retrieved_negatives: int = 1
    max_train_pairs: int = 0
    freeze_embeddings: bool = True
    threads: int = 2
    eval_k: int = 2
    quantize: bool = True
    quant_per_channel: bool = True
    keep_float_onnx: bool = False
    log_every: int = 50
    checkpoint_every: int = 100
    max_val_pairs: int = 0
    eval_torch: bool = True
    negation_augment: bool = True
    aux_checkpoint: str | None = None
    base: str = "minilm"
    trainable_layers: int = 0
    per_set: bool = True
    mixed: bool = True
    negated_nei: bool = True
    extra: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.epochs < 0 or self.aux_epochs < 0 or self.batch_size < 1:
            raise ConfigError("epochs, aux_epochs must be >= 0 and batch_size >= 1")
        if self.class_weighting not in ("sqrt_inverse", "none"):
            raise ConfigError(
                f"class_weighting must be 'sqrt_inverse' or 'none', got {self.class_weighting!r}"
            )
        if not 16 <= self.max_length <= 512 or not 16 <= self.aux_max_length <= 512:
            raise ConfigError("max_length and aux_max_length must be in [16, 512]")
        from sciverify.training.bases import BODIES

        if self.base not in BODIES:
            names = ", ".join(BODIES.names())
            raise ConfigError(f"label model base must be one of {names}, got {self.base!r}")
        if self.trainable_layers < 0:
            raise ConfigError(f"trainable_layers must be >= 0 (0 = all), got {self.trainable_layers}")

    @classmethod
    def tiny(cls, seed: int = 13) -> LabelTrainConfig:
        """A few hundred pairs, one epoch each stage, short inputs: an end-to-end check in about a minute."""
        return cls(
            seed=seed,
            aux_sets=(("fever_symmetric", 32), ("evidence_inference", 32)),
            max_train_pairs=64,
            epochs=1,
            max_length=96,
            aux_max_length=64,
            retrieved_negatives=0,
            log_every=1000,
            max_val_pairs=48,
            eval_torch=False,
        )
