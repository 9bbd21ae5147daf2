"""Stage contracts for the models stage, and their name -> implementation registries.

A selector, label predictor or judge is picked by a string in the pipeline configuration ("trained",
"oracle", "first", "model", "majority", "llm", ...), never by an ``if`` ladder: an implementation module
registers a factory with ``@SELECTORS.register("name")`` (or ``LABEL_PREDICTORS``, ``JUDGES``), and
:mod:`sciverify.models.catalog` builds one by name. This module imports no implementation.

Every stage meets the others only through these protocols, so the Verifier, the cross-validation and
the final fit can be handed any registered implementation.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from sciverify.data.records import Claim, Label
from sciverify.models.features import AbstractInput
from sciverify.models.llm_config import LlmConfig
from sciverify.registry import Registry

__all__ = [
    "JUDGES",
    "LABEL_PREDICTORS",
    "SELECTORS",
    "Judge",
    "JudgeAnswer",
    "JudgeFactory",
    "JudgeStats",
    "LabelCalibration",
    "LabelFactory",
    "LabelPredictor",
    "RationaleSelector",
    "SelectorFactory",
    "SentenceReader",
]


@runtime_checkable
class RationaleSelector(Protocol):
    """Scores every sentence of each candidate abstract for being a rationale for the claim."""

    def score(
        self, claim: str, claim_emb: npt.NDArray[np.floating], abstracts: Sequence[AbstractInput]
    ) -> list[npt.NDArray[np.float32]]:
        """One array of probabilities in [0, 1] per abstract, one entry per sentence."""
        ...


@runtime_checkable
class LabelPredictor(Protocol):
    """Three-way verdict for a claim against (title, rationale sentences) evidences."""

    def predict(self, claim: str, evidences: Sequence[tuple[str, Sequence[str]]]) -> npt.NDArray[np.float32]:
        """Shapes: returns ``(len(evidences), 3)`` probabilities over SUPPORT, CONTRADICT, NOT_ENOUGH_INFO."""
        ...


@runtime_checkable
class SentenceReader(Protocol):
    """Reads (claim, title, sentence) pairs one by one: each sentence's stance and P(rationale)."""

    def read_pairs(self, claim: str, pairs: Sequence[tuple[str, str]]) -> npt.NDArray[np.float32]:
        """Shapes: returns ``(len(pairs), 4)``: P(SUPPORT), P(CONTRADICT), P(NOT_ENOUGH_INFO), P(rationale)
        for each (title, sentence)."""
        ...


@runtime_checkable
class LabelCalibration(Protocol):
    """P(an abstract's SUPPORT/CONTRADICT label is right | it is evidence), from its label probabilities."""

    def predict(self, probs: Sequence[npt.ArrayLike]) -> npt.NDArray[np.float64]:
        """One probability per row of (P(SUPPORT), P(CONTRADICT), P(NOT_ENOUGH_INFO))."""
        ...


@dataclass(frozen=True)
class JudgeAnswer:
    """A judge's reading of one abstract: ``label`` None = NEI or no usable answer (``error`` says)."""

    label: Label | None
    sentences: tuple[int, ...]
    dropped_evidence: int
    text: str | None
    error: str | None = None


@dataclass
class JudgeStats:
    """Counts over a judge's life, shown next to results so nothing is dropped silently."""

    answers: int = 0
    unparseable: int = 0
    dropped_evidence: int = 0
    notes: list[str] = field(default_factory=list)

    def to_json(self, model: str) -> dict[str, object]:
        """The counts under the judge's model name (``verify --json`` adds them as ``llm_judge``)."""
        return {"model": model, "answers": self.answers, "unparseable": self.unparseable,
                "dropped_evidence": self.dropped_evidence}

    def count_line(self, model: str) -> str:
        """One line of what the judge could not use (the CLI prints it on stderr after the results)."""
        return (f"LLM judge {model}: {self.answers} answers, {self.unparseable} unparseable (read as NEI), "
                f"{self.dropped_evidence} evidence strings matched no sentence (dropped)")


@runtime_checkable
class Judge(Protocol):
    """Verdict and evidence sentences for each retrieved abstract at once, in place of the selector, the
    label model and the emit decision (``judge`` in ``pipeline.toml``)."""

    stats: JudgeStats

    def judge(self, claim: str, abstracts: Sequence[Sequence[str]]) -> list[JudgeAnswer]:
        """One answer per abstract (given as its sentences), in input order."""
        ...


#: ``factory(model_dir, gold)``: ``model_dir`` None = shipped weights; ``gold`` the gold claims, which
#: only the oracle reads (it is the one route by which gold evidence reaches a selector).
SelectorFactory = Callable[[Path | None, Sequence[Claim] | None], RationaleSelector]
#: ``factory(model_dir)``; None = shipped weights.
LabelFactory = Callable[[Path | None], LabelPredictor]
#: ``factory(llm_settings)``: the ``[llm]`` section of ``pipeline.toml``.
JudgeFactory = Callable[[LlmConfig], Judge]

SELECTORS: Registry[SelectorFactory] = Registry("rationale selector")
LABEL_PREDICTORS: Registry[LabelFactory] = Registry("label predictor")
JUDGES: Registry[JudgeFactory] = Registry("judge")
