"""The plan of a cross-fitted run: its settings, its folds, and the recipes fixed before any fold was scored.

Every train claim gets a fold (:func:`sciverify.data.splits.fold_claims`: a claim, its negation and its
siblings citing the same abstracts share one), written to ``folds.json``; a resumed run must find the same
plan there. Each fold's models train on the other folds (:func:`fold_splits`), with the recipes of
:func:`label_recipe` and :func:`rationale_recipe`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from sciverify.data.io import write_text_atomic
from sciverify.data.records import Claim
from sciverify.errors import ArtifactError, ConfigError
from sciverify.retrieval.base import DEFAULT_K
from sciverify.training.label_config import LabelTrainConfig
from sciverify.training.rationale_train import RationaleTrainConfig
from sciverify.training.reader_train import ReaderTrainConfig

__all__ = [
    "ALL_AUX",
    "CV_AUX",
    "DIRECTION_AUX",
    "FOLDS_FILE",
    "SHIPPED_RUN",
    "CvConfig",
    "ShippedRun",
    "fold_splits",
    "all_label_recipe",
    "all_reader_recipe",
    "direction_label_recipe",
    "label_recipe",
    "rationale_recipe",
    "reader_recipe",
    "run_name",
    "write_plan",
]

#: The auxiliary entailment pairs of the cross-validated recipe (set, pair budget; 0 = all): the sets that
#: teach polarity (biomedical effect directions, claims refuted by evidence, NLI contradiction) first,
#: about 6,400 pairs, so that the 109M-parameter body's stage fits in well under an hour on two cores.
CV_AUX: tuple[tuple[str, int], ...] = (
    ("evidence_inference", 2000),
    ("mnli", 2000),
    ("fever_symmetric", 0),
    ("scitail", 500),
    ("pubmedqa", 500),
)

#: The direction recipe's auxiliary pairs (:func:`direction_label_recipe`): :data:`CV_AUX` and, aimed at the
#: side of a finding, the corpus's direction minimal pairs (:mod:`sciverify.training.direction`), minimally
#: edited SNLI pairs that flip their label, and Breaking NLI's antonym and synonym swaps: about 11,200 pairs.
DIRECTION_AUX: tuple[tuple[str, int], ...] = (
    *CV_AUX,
    ("corpus_direction", 3000),
    ("cad_snli", 1200),
    ("breaking_nli", 600),
)

#: Every pair of the auxiliary data (issue 40's "a stance model that has read everything we have"): all of
#: SNLI dev+test, both MultiNLI dev halves (the mismatched one with one annotator's labels), counterfactual
#: SNLI without SNLI's duplicates, SciNLI (:data:`~sciverify.training.aux_pairs.SCINLI_LABELS`), SciTail,
#: Symmetric FEVER, every Evidence Inference prompt, PubMedQA without the cross-domain check's claims, and
#: 8,000 corpus direction minimal pairs; Breaking NLI keeps its antonym and synonym swaps only (its other
#: 5,000 pairs swap a colour, drink or nationality, which in a scientific claim is another subject, NOT
#: ENOUGH INFO, not a contradiction). About 88,000 pairs, read twice.
ALL_AUX: tuple[tuple[str, int], ...] = (
    ("snli", 0),
    ("mnli", 0),
    ("mnli_mismatched", 0),
    ("cad_snli", 0),
    ("breaking_nli", 0),
    ("scinli", 0),
    ("scitail", 0),
    ("fever_symmetric", 0),
    ("evidence_inference", 0),
    ("pubmedqa_train", 0),
    ("corpus_direction", 8000),
)

FOLDS_FILE = "folds.json"
#: What the reader may do in the pipeline, as a grid of its own (``sciverify.training.cv.decision``):
#: "all" (list, label and be heard by the emit model), "list" (only choose the listed sentences of the
#: abstracts emitted without it) or "every" (the options of both, and the label from the reader and the
#: label model averaged).
READER_ROLES = ("all", "list", "every")


def run_name(label_base: str, reader: str = "", role: str = "all") -> str:
    """The folder of a run's decision and out-of-fold predictions: the label body, the reader recipe, and
    the reader's role when it is not the full one (``mpnet6``, ``mpnet6+reader-mpnet6``,
    ``mpnet6+reader-mpnet6-list``)."""
    if not reader:
        return label_base
    return f"{label_base}+reader-{reader}" + ("" if role == "all" else f"-{role}")


@dataclass(frozen=True)
class ShippedRun:
    """Which run of ``results/cv5`` the package's weights come from: its label body, reader and the
    reader's role. The tests that recompute or pin the shipped decision and calibrator, and the benchmarks
    that report the shipped figures, read that run's committed out-of-fold outputs through this one
    record, so shipping another run (by a rule of docs/cross-validation.md) changes one line."""

    label_base: str
    reader: str
    role: str

    @property
    def name(self) -> str:
        """The run's decision folder (:func:`run_name`)."""
        return run_name(self.label_base, self.reader, self.role)


#: The run that ships (docs/cross-validation.md: each candidate's rule, written before its figures).
SHIPPED_RUN = ShippedRun(label_base="mpnet6-all", reader="mpnet6", role="list")


@dataclass(frozen=True)
class CvConfig:
    """What one cross-fitted run does.

    Attributes:
        out_dir: run directory (resumable: finished stages are skipped).
        folds: number of grouped folds.
        seed: seed of every stage.
        label_base: the label model, by its name in :data:`sciverify.training.cv.learners.LABEL_MODELS`
            (``mpnet6`` ships).
        k: candidate abstracts judged per claim (fixed, not tuned).
        tiny: CI-sized recipes on a slice of the claims.
        max_claims: score only the first claims of each fold (0 = all; ``tiny`` sets 12).
        final: also train the final models on all claims.
        index_dir: corpus index (default: the SciFact index).
        data_dir: SciFact data directory.
        reader: the per-sentence reader, by its name in :data:`sciverify.training.cv.learners.READERS`
            (empty: no reader). With one, every fold also trains a reader, and how the pipeline uses it
            is chosen inside the folds.
        reader_role: which grid of the reader's options the folds choose from (:data:`READER_ROLES`).
            The roles share the folds' readers and outputs; each has its own decision and final folder.
    """

    out_dir: Path
    folds: int = 5
    seed: int = 13
    label_base: str = "mpnet6"
    k: int = DEFAULT_K
    tiny: bool = False
    max_claims: int = 0
    final: bool = True
    index_dir: Path | None = None
    data_dir: Path | None = None
    reader: str = ""
    reader_role: str = "all"

    def __post_init__(self) -> None:
        if self.folds < 2:
            raise ConfigError(f"--cv needs at least 2 folds, got {self.folds}")
        if self.k < 1:
            raise ConfigError(f"k must be at least 1, got {self.k}")
        if self.reader_role not in READER_ROLES:
            roles = ", ".join(READER_ROLES)
            raise ConfigError(f"unknown reader role {self.reader_role!r}; choose one of {roles}")
        if self.reader_role != "all" and not self.reader:
            raise ConfigError(f"--reader-role {self.reader_role} needs a reader (--reader)")

    @property
    def limit(self) -> int:
        """Claims scored per fold (0 = all)."""
        return self.max_claims or (12 if self.tiny else 0)

    def to_json(self) -> dict[str, Any]:
        """The record written to ``config.json`` (paths as strings, unset ones empty)."""
        return {
            **asdict(self),
            "out_dir": str(self.out_dir),
            "index_dir": str(self.index_dir or ""),
            "data_dir": str(self.data_dir or ""),
        }


def label_recipe(base: str, seed: int, tiny: bool, aux_checkpoint: Path | None) -> LabelTrainConfig:
    """The label model's recipe under the protocol, fixed before any fold was scored.

    Every body gets the same SciFact data: two epochs over the gold rationales, the claim-like sentences
    of cited abstracts without evidence (NOT_ENOUGH_INFO) and rule-negated claims with flipped labels
    (for CONTRADICT), after the auxiliary entailment stage on :data:`CV_AUX`. What a body changes is its
    entry's ``cv_recipe`` in :data:`sciverify.training.bases.BODIES`: MiniLM trains every layer at the rates
    its earlier recipes found; ``mpnet`` (the first recipe, stopped after one fold: it underfit) trains its
    top 6 of 12 layers at 3e-5 and skips the auxiliary stage; ``mpnet6``, the second and last mpnet recipe,
    keeps the body's lowest 6 layers and trains all of them at 5e-5 for the body (the top of the usual
    range for a base-width encoder on a few thousand pairs) and 1e-3 for the fresh head.
    """
    from sciverify.training.bases import BODIES

    checkpoint = str(aux_checkpoint) if aux_checkpoint is not None else None
    if tiny:
        return replace(LabelTrainConfig.tiny(seed), base=base, aux_checkpoint=checkpoint, eval_torch=False)
    common: dict[str, Any] = {
        "seed": seed,
        "aux_sets": CV_AUX,
        "epochs": 2,
        "retrieved_negatives": 0,
        "per_set": False,
        "mixed": False,
        "negation_augment": True,
        "negated_nei": False,
        "eval_torch": False,
        "aux_checkpoint": checkpoint,
        "base": base,
        "log_every": 20,
    }
    return LabelTrainConfig(**{**common, **BODIES.get(base).cv_recipe})


def direction_label_recipe(
    seed: int, tiny: bool, aux_checkpoint: Path | None, *, retrieved_nei: bool = False
) -> LabelTrainConfig:
    """The label model aimed at direction (``--label-base mpnet6-direction``): :func:`label_recipe`'s
    mpnet6 recipe with the auxiliary stage on :data:`DIRECTION_AUX`; its SciFact stage is mpnet6's.

    With ``retrieved_nei`` (``mpnet6-direction-retrieved``, the first direction recipe, fixed before any
    fold was scored and stopped after one), the SciFact stage also reads one topical uncited abstract per
    claim as NOT_ENOUGH_INFO: on fold 0 it called 34 of 113 gold rationales NOT_ENOUGH_INFO (mpnet6: 8)
    and read 0.504 of the labels right against 0.752 (docs/cross-validation.md). Tiny: MiniLM's CI recipe
    with 16 direction pairs, so CI runs the loader end to end."""
    if tiny:
        base = label_recipe("minilm", seed, tiny, aux_checkpoint)
        return replace(base, aux_sets=(*base.aux_sets, ("corpus_direction", 16)))
    return replace(
        label_recipe("mpnet6", seed, tiny, aux_checkpoint),
        aux_sets=DIRECTION_AUX,
        retrieved_negatives=1 if retrieved_nei else 0,
    )


def all_label_recipe(seed: int, tiny: bool, aux_checkpoint: Path | None) -> LabelTrainConfig:
    """The label model that has read every auxiliary pair (``--label-base mpnet6-all``): mpnet6's recipe
    with its entailment stage on :data:`ALL_AUX` for two epochs; its SciFact stage is mpnet6's. The stage
    sees no SciFact claim, so one checkpoint serves every fold and the final model (many hours on two
    cores, resumed inside the stage: ``sciverify train --entailment-only``). Tiny: MiniLM's CI recipe with
    a few pairs of each set this recipe adds, so CI runs their loaders end to end."""
    if tiny:
        base = label_recipe("minilm", seed, tiny, aux_checkpoint)
        added = (("mnli_mismatched", 8), ("scinli", 8), ("pubmedqa_train", 8), ("corpus_direction", 8))
        return replace(base, aux_sets=(*base.aux_sets, *added))
    return replace(label_recipe("mpnet6", seed, tiny, aux_checkpoint), aux_sets=ALL_AUX, aux_epochs=2)


def reader_recipe(name: str, seed: int, tiny: bool) -> ReaderTrainConfig:
    """The reader's recipe under the protocol, fixed before any fold was scored
    (:class:`sciverify.training.reader_train.ReaderTrainConfig`'s defaults: every auxiliary pair but the
    held-out PubMedQA ids, then two SciFact epochs with negated claims and retrieved hard negatives)."""
    if tiny:
        return replace(ReaderTrainConfig.tiny(seed), base="minilm")
    return ReaderTrainConfig(seed=seed, base=name)


def all_reader_recipe(seed: int, tiny: bool, checkpoint: Path) -> ReaderTrainConfig:
    """(R), the reader from the same checkpoint (``--reader mpnet6-all``): the reader's recipe, but it
    starts from the finished entailment stage of ``--label-base mpnet6-all`` (82,693 pairs read twice, body
    and three-way head) instead of its own stage (45,442 pairs read once); its SciFact stage is the reader's.
    The label model and the reader then share one starting body. Tiny: the tiny reader from the tiny stage."""
    from sciverify.training.label_train import aux_stamp

    stage = all_label_recipe(seed, tiny, checkpoint)
    return replace(
        reader_recipe(stage.base, seed, tiny),
        start_checkpoint=str(checkpoint),
        start_stamp=aux_stamp(stage),
    )


def rationale_recipe(seed: int, tiny: bool) -> RationaleTrainConfig:
    """The selector's recipe: the shipped one (or the CI-sized one) with the run's seed."""
    return replace(RationaleTrainConfig.tiny() if tiny else RationaleTrainConfig(), seed=seed)


def fold_splits(
    claims: Sequence[Claim], fold_of: Sequence[int], folds: int, limit: int
) -> list[tuple[list[Claim], list[Claim]]]:
    """Per fold: the claims its models train on (every other fold) and the claims they score (its own,
    the first ``limit`` of them when ``limit`` > 0)."""
    out = []
    for fold in range(folds):
        train = [c for c, f in zip(claims, fold_of, strict=True) if f != fold]
        held = [c for c, f in zip(claims, fold_of, strict=True) if f == fold]
        out.append((train, held[:limit] if limit else held))
    return out


def write_plan(out: Path, cfg: CvConfig, claims: Sequence[Claim], fold_of: Sequence[int]) -> None:
    """Write ``folds.json`` and ``config.json``; refuse a run directory that holds another fold plan."""
    plan = {
        "folds": cfg.folds,
        "seed": cfg.seed,
        "fold_of": {str(c.id): f for c, f in zip(claims, fold_of, strict=True)},
    }
    folds_path = out / FOLDS_FILE
    if folds_path.exists() and json.loads(folds_path.read_text())["fold_of"] != plan["fold_of"]:
        raise ArtifactError(f"{folds_path} holds another fold plan (other claims or seed); use a fresh --out")
    write_text_atomic(folds_path, json.dumps(plan, indent=0, sort_keys=True) + "\n")
    config = json.dumps(cfg.to_json(), indent=1, sort_keys=True, default=str) + "\n"
    write_text_atomic(out / "config.json", config)
