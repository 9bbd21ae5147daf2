"""`sciverify leaderboard make-gold`: a practice gold of whole train-claim families and its public claims."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from sciverify.data.io import read_claims
from sciverify.data.splits import claim_groups, split_claims
from sciverify.errors import DataFormatError
from sciverify.serving.practice_gold import write_practice_gold


def test_the_practice_gold_is_the_validation_split_with_its_public_claims(scifact, tmp_path: Path) -> None:
    gold, public = tmp_path / "gold.jsonl", tmp_path / "claims.jsonl"
    n = write_practice_gold(scifact.train, gold, public)
    train = read_claims(scifact.train)
    expected = [c.id for c in split_claims(train).validation]
    assert n == len(expected) == 181
    assert [c.id for c in read_claims(gold)] == expected
    assert sum(1 for c in read_claims(gold) if c.evidence) > 100  # a gold with evidence to score
    rows = [json.loads(line) for line in public.read_text(encoding="utf-8").splitlines()]
    assert [r["id"] for r in rows] == expected and all(set(r) == {"id", "claim"} for r in rows)
    # whole families: no claim of the gold shares a family with a train claim left out
    groups = dict(zip((c.id for c in train), claim_groups(train), strict=True))
    inside = {groups[i] for i in expected}
    assert all(groups[c.id] not in inside for c in train if c.id not in set(expected))


def test_an_output_that_is_a_directory_is_refused_before_writing(scifact, tmp_path: Path) -> None:
    with pytest.raises(DataFormatError, match="directory"):
        write_practice_gold(scifact.train, tmp_path, tmp_path / "claims.jsonl")
    assert not (tmp_path / "claims.jsonl").exists()


def test_the_command_says_what_it_wrote(scifact, tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "sciverify", "leaderboard", "make-gold", "--data", str(scifact.root),
         "-o", str(tmp_path / "gold.jsonl"), "--claims-out", str(tmp_path / "claims.jsonl")],
        capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("practice gold: 181 train claims in ")
