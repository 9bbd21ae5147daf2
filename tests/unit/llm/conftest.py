"""Fixtures for the LLM client tests: a few real SciFact gold pairs written as `instruct-pairs` does."""

from __future__ import annotations

from pathlib import Path

import pytest

from sciverify.data.datasets import DataPaths
from sciverify.scoring.instruct import InstructPair, read_instruct_gold, write_instruct_pairs


@pytest.fixture(scope="session")
def gold_pairs(scifact: DataPaths) -> list[InstructPair]:
    """The first 12 gold pairs of claims_train.jsonl (SUPPORT, CONTRADICT and NEI among them)."""
    return read_instruct_gold(scifact.root / "claims_train.jsonl", scifact.corpus)[:12]


@pytest.fixture()
def pairs_file(gold_pairs: list[InstructPair], tmp_path: Path) -> Path:
    path = tmp_path / "pairs.jsonl"
    write_instruct_pairs(path, gold_pairs)
    return path
