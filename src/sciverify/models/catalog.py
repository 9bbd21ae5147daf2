"""Build a selector, label predictor or judge by its registered name.

Importing this module imports every built-in implementation, and each registers itself in
:mod:`sciverify.models.base` with a decorator; so a name registered by a user module before or after this
one is there alongside the built-ins, never instead of them.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from sciverify.data.records import Claim
from sciverify.models import baselines, label, llm, rationale
from sciverify.models.base import (
    JUDGES,
    LABEL_PREDICTORS,
    SELECTORS,
    Judge,
    LabelPredictor,
    RationaleSelector,
)
from sciverify.models.llm_config import LlmConfig

__all__ = [
    "BUILTIN_MODULES",
    "get_judge",
    "get_label_predictor",
    "get_selector",
    "judge_names",
    "label_predictor_names",
    "selector_names",
]

#: The modules whose implementations register themselves on import.
BUILTIN_MODULES = (baselines.__name__, label.__name__, llm.__name__, rationale.__name__)


def selector_names() -> list[str]:
    """Registered selector names."""
    return SELECTORS.names()


def label_predictor_names() -> list[str]:
    """Registered label predictor names."""
    return LABEL_PREDICTORS.names()


def judge_names() -> list[str]:
    """Registered judge names (``models`` is the pipeline's own selector + label model + decision)."""
    return JUDGES.names()


def get_selector(
    name: str, model_dir: Path | None = None, gold: Sequence[Claim] | None = None
) -> RationaleSelector:
    """Build the selector registered as ``name`` (``model_dir`` None = shipped weights; ``gold`` for the
    oracle)."""
    return SELECTORS.get(name)(model_dir, gold)


def get_label_predictor(name: str, model_dir: Path | None = None) -> LabelPredictor:
    """Build the label predictor registered as ``name`` (``model_dir`` None = shipped weights)."""
    return LABEL_PREDICTORS.get(name)(model_dir)


def get_judge(name: str, settings: LlmConfig) -> Judge:
    """Build the judge registered as ``name`` with the ``[llm]`` settings."""
    return JUDGES.get(name)(settings)
