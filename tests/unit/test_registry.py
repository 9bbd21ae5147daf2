"""The shared name -> implementation registry, and the built-ins every stage registers in it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from sciverify.errors import ConfigError
from sciverify.registry import Registry

SRC = Path(__file__).resolve().parents[2] / "src"


def test_get_names_and_a_clear_error_for_an_unknown_name() -> None:
    reg: Registry[int] = Registry("widget")
    reg.register("b")(2)
    reg.add("a", 1)
    assert reg.names() == ["a", "b"] and list(reg) == ["a", "b"] and "a" in reg
    assert reg.get("b") == 2
    reg.add("b", 3)  # a later registration replaces the earlier one
    assert reg.get("b") == 3
    with pytest.raises(ConfigError, match="unknown widget 'c'; choose from a, b"):
        reg.get("c")
    with pytest.raises(ConfigError, match="non-empty name"):
        reg.add("", 0)


def test_a_selector_registered_before_the_builtins_are_loaded_does_not_drop_them() -> None:
    # a fresh interpreter, so that nothing has imported the built-in models yet
    code = (
        "from sciverify.models.base import SELECTORS\n"
        "SELECTORS.add('mine', lambda model_dir, gold: None)\n"
        "from sciverify.models.catalog import label_predictor_names, selector_names, judge_names\n"
        "print(selector_names(), label_predictor_names(), judge_names())\n"
    )
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.strip() == (
        "['cosine', 'first', 'mine', 'oracle', 'trained'] ['majority', 'model'] ['llm']"
    )


def test_every_stage_looks_its_implementations_up_in_one_registry_style() -> None:
    from sciverify.models.catalog import get_label_predictor, get_selector
    from sciverify.retrieval.base import RETRIEVERS
    from sciverify.retrieval.methods import make_retriever
    from sciverify.training.bases import BASES, BODIES

    assert make_retriever  # importing the methods registers the built-in retrievers
    assert RETRIEVERS.names() == ["bm25", "dense", "fusion", "oracle", "tfidf"]
    assert BASES == ("minilm", "mpnet", "mpnet6") and BODIES.get("mpnet6").kept_layers == 6
    assert get_label_predictor("majority").predict("c", [("t", ["s"])]).shape == (1, 3)
    with pytest.raises(ConfigError, match="oracle rationale selector needs the gold claims"):
        get_selector("oracle")
    with pytest.raises(ConfigError, match="unknown rationale selector 'magic'"):
        get_selector("magic")
