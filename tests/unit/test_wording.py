"""Counts agree with their nouns: the helper, and the messages a newcomer met with "(s)" or "1 ...s"."""

from __future__ import annotations

import io
import re
import tokenize
from pathlib import Path

from sciverify.scoring.problems import Problem, problems_error
from sciverify.wording import counted


def test_counted_agrees_in_number() -> None:
    assert counted(0, "problem") == "0 problems"
    assert counted(1, "problem") == "1 problem"
    assert counted(2, "supporting abstract") == "2 supporting abstracts"
    assert counted(1, "analysis", "analyses") == "1 analysis"
    assert counted(3, "analysis", "analyses") == "3 analyses"


def test_no_scorer_message_hedges_its_plural(tmp_path: Path) -> None:
    one = problems_error([Problem(str(tmp_path / "p.jsonl"), 3, "bad line")], "the predictions")
    assert "p.jsonl:3: 1 problem in the predictions:" in str(one), str(one)
    two = problems_error([Problem("p.jsonl", 3, "a"), Problem("p.jsonl", 4, "b")], "the predictions")
    assert "2 problems in the predictions:" in str(two)
    # no string of the scorer, the CLI or the data tools says "problem(s)"
    source_root = Path(__file__).parents[2] / "src" / "sciverify"
    hedge = re.compile(r"[a-z]\(s\)[ ;:,.'\"]")
    hedged = [
        f"{path.relative_to(source_root)}: {token.string}"
        for folder in ("scoring", "cli", "data")
        for path in sorted((source_root / folder).rglob("*.py"))
        for token in tokenize.generate_tokens(io.StringIO(path.read_text(encoding="utf-8")).readline)
        if token.type == tokenize.STRING and hedge.search(token.string)
    ]
    assert hedged == [], hedged
