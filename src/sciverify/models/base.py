"""Stage contracts for the models stage, and a name -> implementation registry.

A selector or label predictor is picked by a string in the pipeline configuration ("trained",
"oracle", "first", "majority", ...), never by an ``if`` ladder in a script; adding one is a module plus
a :func:`register_selector` / :func:`register_label_predictor` call.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from sciverify.errors import ConfigError
from sciverify.models.features import AbstractInput

__all__ = [
    "LabelPredictor",
    "RationaleSelector",
    "get_label_predictor",
    "get_selector",
    "label_predictor_names",
    "register_label_predictor",
    "register_selector",
    "selector_names",
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


_SELECTORS: dict[str, Callable[[Path | None], Any]] = {}
_LABELERS: dict[str, Callable[[Path | None], Any]] = {}


def register_selector(name: str, factory: Callable[[Path | None], Any]) -> None:
    """Make ``factory(model_dir)`` available as selector ``name``."""
    _SELECTORS[name] = factory


def register_label_predictor(name: str, factory: Callable[[Path | None], Any]) -> None:
    """Make ``factory(model_dir)`` available as label predictor ``name``."""
    _LABELERS[name] = factory


def _ensure_builtins() -> None:
    # Imported here, not at module import, so `base` stays free of model code and import cycles.
    if not _SELECTORS:
        from sciverify.models import baselines, rationale

        register_selector("trained", rationale.TrainedSelector.load)
        register_selector("first", lambda _dir: baselines.FirstSentencesSelector())
        register_selector("cosine", lambda _dir: baselines.CosineSelector())
        register_selector("oracle", lambda _dir: baselines.OracleSelector())
        register_label_predictor("majority", lambda _dir: baselines.MajorityLabelPredictor())
        register_label_predictor("model", _load_label_model)


def _load_label_model(model_dir: Path | None) -> Any:
    from sciverify.models.label import LabelModel

    return LabelModel.load(model_dir)


def selector_names() -> list[str]:
    """Registered selector names."""
    _ensure_builtins()
    return sorted(_SELECTORS)


def label_predictor_names() -> list[str]:
    """Registered label predictor names."""
    _ensure_builtins()
    return sorted(_LABELERS)


def get_selector(name: str, model_dir: Path | None = None) -> RationaleSelector:
    """Build the selector registered as ``name`` (``model_dir`` None = shipped weights)."""
    _ensure_builtins()
    if name not in _SELECTORS:
        raise ConfigError(f"unknown rationale selector {name!r}; choose from {', '.join(sorted(_SELECTORS))}")
    selector: RationaleSelector = _SELECTORS[name](model_dir)
    return selector


def get_label_predictor(name: str, model_dir: Path | None = None) -> LabelPredictor:
    """Build the label predictor registered as ``name`` (``model_dir`` None = shipped weights)."""
    _ensure_builtins()
    if name not in _LABELERS:
        raise ConfigError(f"unknown label predictor {name!r}; choose from {', '.join(sorted(_LABELERS))}")
    predictor: LabelPredictor = _LABELERS[name](model_dir)
    return predictor
