"""The decision's settings: one record, :class:`DecisionConfig`, with the fixed points the rule and the
cross-validation start from, shipped as ``decision/decision.toml`` beside the models.

The settings were tuned against one selector, label model, reader and emit model, so they ship in the
model directory's own ``decision/`` folder (:data:`DECISION_DIR`), not inside any one model's folder. A
model directory written before that folder existed keeps them in the ``[decision]`` table of
``rationale/pipeline.toml``; :func:`sciverify.pipeline.config.tuned_config` still reads those.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path
from typing import Any

import numpy as np

from sciverify.errors import ConfigError

__all__ = [
    "DECISION_DIR",
    "DECISION_TOML",
    "LABEL_READS",
    "LABEL_SOURCES",
    "LEARNED",
    "NO_EVIDENCE",
    "VERISCI_RULE",
    "DecisionConfig",
    "dump_decision",
    "learned_decision",
    "load_decision",
    "toml_value",
]

#: The model directory's folder that holds the decision, and the settings' file inside it.
DECISION_DIR = "decision"
DECISION_TOML = "decision.toml"

#: Where an abstract's label probabilities come from: the label model reading the selected sentences
#: together, the reader's per-sentence stance over them, or the mean of the two over the label model's
#: sentences ("both": two stance models that read differently, averaged).
LABEL_SOURCES = ("model", "reader", "both")
#: The most sentences the label model reads per candidate in the learned decision (the best two above the
#: threshold, else the best one): stored label outputs cover every read of up to this many sentences.
LABEL_READS = 2
#: Label probabilities of a candidate the label model never read: certainly NOT_ENOUGH_INFO.
NO_EVIDENCE = np.array([0.0, 0.0, 1.0], dtype=np.float32)


@dataclass(frozen=True)
class DecisionConfig:
    """The rule's settings (``decision/decision.toml``; why: :mod:`sciverify.decision.rule`).

    Attributes:
        sentence_threshold: a sentence is a rationale when its score is at least this.
        max_sentences: at most this many rationale sentences per abstract go to the label model.
        max_listed: at most this many are listed in a pick (0: ``max_sentences``; else at least it).
        min_rationale_score: abstracts whose best sentence scores below this skip the label model.
        max_labelled: at most this many abstracts (best rationale first) go to the label model per claim.
        emit_threshold: emit an abstract when its confidence is at least this.
        rationale_power: exponent of the best rationale score in the confidence.
        rank_discount: confidence is multiplied by ``1 / (1 + rank_discount * retrieval_rank)``.
        max_emitted: at most this many abstracts per claim (highest confidence first).
        confidence: "heuristic" (the product above) or "learned" (the emit model's probability).
        reader_reads: sentences per candidate the reader reads, the selector's best first (0: no reader).
        reader_weight: weight of the reader's P(rationale) in a read sentence's score (the selector's
            score has the rest; an unread sentence keeps only its share of the selector's score).
        label_source: one of :data:`LABEL_SOURCES`.
        reader_lists_only: the reader only chooses the listed sentences of abstracts emitted without it
            (needs the label model as label source and a blend weight above 0).
    """

    sentence_threshold: float = 0.5
    max_sentences: int = 3
    min_rationale_score: float = 0.2
    max_labelled: int = 6
    emit_threshold: float = 0.5
    rationale_power: float = 0.5
    rank_discount: float = 0.0
    max_emitted: int = 5
    confidence: str = "heuristic"
    max_listed: int = 0
    reader_reads: int = 0
    reader_weight: float = 0.0
    label_source: str = "model"
    reader_lists_only: bool = False

    def __post_init__(self) -> None:
        if self.confidence not in ("heuristic", "learned"):
            raise ConfigError(
                f"decision.confidence must be 'heuristic' or 'learned', got {self.confidence!r}"
            )
        for name in ("sentence_threshold", "min_rationale_score", "emit_threshold"):
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0:
                raise ConfigError(f"decision.{name} must be in [0, 1], got {value}")
        if self.max_sentences < 1 or self.max_labelled < 1 or self.max_emitted < 1:
            raise ConfigError("decision.max_sentences, max_labelled and max_emitted must be >= 1")
        if self.max_listed and self.max_listed < self.max_sentences:
            raise ConfigError(
                f"decision.max_listed must be 0 or at least max_sentences ({self.max_sentences}), "
                f"got {self.max_listed}"
            )
        if self.rationale_power < 0 or self.rank_discount < 0:
            raise ConfigError("decision.rationale_power and rank_discount must be >= 0")
        if self.label_source not in LABEL_SOURCES:
            raise ConfigError(
                f"decision.label_source must be one of {LABEL_SOURCES}, got {self.label_source!r}"
            )
        if not 0.0 <= self.reader_weight <= 1.0 or self.reader_reads < 0:
            raise ConfigError("decision.reader_weight must be in [0, 1] and reader_reads >= 0")
        if (self.reader_weight > 0 or self.label_source != "model") and self.reader_reads < 1:
            raise ConfigError(
                f"decision.reader_weight and label_source = {self.label_source!r} need reader_reads >= 1"
            )
        if self.reader_lists_only and (self.label_source != "model" or self.reader_weight <= 0):
            raise ConfigError(
                "decision.reader_lists_only needs label_source = 'model' and reader_weight > 0 "
                "(a reader that only lists has nothing else to change)"
            )

    def emission(self) -> DecisionConfig:
        """The settings that decide which abstracts are emitted, with what label and confidence: these,
        or, when the reader only lists, these without the reader."""
        if not self.reader_lists_only:
            return self
        return replace(self, reader_reads=0, reader_weight=0.0, reader_lists_only=False)

    @property
    def uses_reader(self) -> bool:
        """Whether the reader runs: it reads whenever ``reader_reads`` > 0, since the emit model hears it
        (:data:`sciverify.models.emit.READER_EMIT_FEATURES`) even when it neither blends nor labels.
        When it only lists (``reader_lists_only``) it runs after the emission, on the emitted abstracts."""
        return self.reader_reads > 0

    @property
    def uses_label_model(self) -> bool:
        """Whether the label model runs: it gives the label alone or beside the reader."""
        return self.label_source != "reader"

    @property
    def reads_before_emission(self) -> bool:
        """Whether the reader reads every candidate before the emission (it is heard, blends or labels)."""
        return self.uses_reader and not self.reader_lists_only

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> DecisionConfig:
        known = {f.name for f in fields(cls)}
        unknown = set(data) - known
        if unknown:
            raise ConfigError(f"unknown decision settings: {', '.join(sorted(unknown))}")
        return cls(**data)


#: VeriSci's decision rule (Wadden et al. 2020, sec. 5): every sentence scoring >= 0.5 is a rationale, an
#: abstract with no rationale is NOT_ENOUGH_INFO, otherwise the label model's argmax decides. Used for the
#: oracle-rationale ablation and the paper-style baseline.
VERISCI_RULE = DecisionConfig(
    sentence_threshold=0.5,
    max_sentences=64,
    min_rationale_score=0.5,
    max_labelled=64,
    emit_threshold=0.5,
    rationale_power=0.0,
    rank_discount=0.0,
    max_emitted=64,
)
#: The learned decision as the cross-validation fixes it before any fold is scored: the label model reads
#: at most :data:`LABEL_READS` sentences, a pick lists up to three (the abstract metric reads three),
#: every candidate is labelled and the emit model alone decides. The grid's settings
#: (:func:`learned_decision`) and ``max_labelled`` = k complete it.
LEARNED = DecisionConfig(
    max_sentences=LABEL_READS,
    max_listed=3,
    min_rationale_score=0.0,
    rationale_power=0.0,
    confidence="learned",
)


def learned_decision(settings: Mapping[str, Any], k: int) -> DecisionConfig:
    """:data:`LEARNED` with the chosen ``settings`` (sentence and emit threshold, abstracts per claim and
    the reader's options; each read as its field's type) for ``k`` candidates per claim."""
    known = {f.name for f in fields(DecisionConfig)}
    unknown = set(settings) - known
    if unknown:
        raise ConfigError(f"unknown decision settings: {', '.join(sorted(unknown))}")
    typed = {name: type(getattr(LEARNED, name))(value) for name, value in settings.items()}
    return replace(LEARNED, max_labelled=k, **typed)


def dump_decision(cfg: DecisionConfig, path: Path) -> None:
    """Write ``cfg`` as ``path`` (a ``[decision]`` table, the same as in a pipeline file)."""
    body = "\n".join(f"{k} = {toml_value(v)}" for k, v in cfg.to_json().items())
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(f"[decision]\n{body}\n", encoding="utf-8")


def load_decision(path: Path) -> DecisionConfig:
    """The settings of a ``decision.toml``; ConfigError naming the file when it cannot be used."""
    try:
        data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
        table = data.get("decision")
        if set(data) != {"decision"} or not isinstance(table, dict):
            raise ConfigError("expected one [decision] table")
        return DecisionConfig.from_json(table)
    except (OSError, tomllib.TOMLDecodeError, ConfigError, TypeError) as exc:
        raise ConfigError(f"{path}: {exc}") from None


def toml_value(value: Any) -> str:
    """A scalar setting as TOML (the settings files are flat tables of scalars, so this suffices)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    raise ConfigError(f"cannot write {value!r} to TOML")
