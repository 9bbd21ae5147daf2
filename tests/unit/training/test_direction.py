"""Direction minimal pairs from the corpus, the direction swap they use, and the two new aux loaders."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest

from sciverify.data.io import read_corpus
from sciverify.data.records import Abstract
from sciverify.errors import DataFormatError
from sciverify.training.aux_pairs import load_aux, load_breaking_nli, load_cad_snli
from sciverify.training.direction import DIRECTION_WORDS, direction_pairs, finding_claim
from sciverify.training.negation import swap_direction


@pytest.mark.parametrize(
    ("text", "flipped"),
    [
        ("Smoking protects against lung cancer.", "Smoking raises the risk of lung cancer."),
        (
            "H. pylori infection increases the risk of gastric cancer.",
            "H. pylori infection protects against gastric cancer.",
        ),
        ("Obesity is a risk factor for diabetes.", "Obesity is protective against diabetes."),
        ("Statins reduce cardiovascular risk.", "Statins increase cardiovascular risk."),
        ("Expression was higher in tumours.", "Expression was lower in tumours."),
        ("Protects against nothing here.", "Raises the risk of nothing here."),
    ],
)
def test_swap_direction_words_and_phrases(text: str, flipped: str) -> None:
    assert swap_direction(text) == flipped
    assert swap_direction("The cohort was followed for ten years.") is None


def test_finding_claim_takes_the_reported_clause() -> None:
    assert (
        finding_claim("These results suggest that IL-6 (interleukin 6) increases tumour growth (P < 0.01).")
        == "IL-6 increases tumour growth"
    )
    assert finding_claim("In conclusion: exercise improved survival.") == "Exercise improved survival"


def _doc(*sentences: str) -> Abstract:
    return Abstract(1, "A title", sentences)


def test_pairs_are_balanced_and_skip_purpose_and_null_sentences() -> None:
    doc = _doc(
        "We aimed to test whether aspirin increases bleeding in older adults over ten years.",
        "Aspirin did not increase the rate of bleeding in the older adults of this cohort.",
        "Aspirin increased the rate of major bleeding in older adults compared with placebo.",
    )
    pairs = direction_pairs([doc], 100, seed=1)
    assert len(pairs) == 4  # only the third sentence reports a direction
    claims = Counter(p.claim for p in pairs)
    evidence = Counter(p.sentences[-1] for p in pairs)
    # every claim and every evidence text occurs once on each side: only the comparison predicts the label
    for text in list(claims) + list(evidence):
        sides = {p.supports for p in pairs if text in (p.claim, p.sentences[-1])}
        assert sides == {True, False}
    assert all(count == 2 for count in claims.values()) and all(count == 2 for count in evidence.values())
    agree = [p for p in pairs if p.supports]
    assert {("increased" in p.claim, "increased" in p.sentences[-1]) for p in agree} == {
        (True, True),
        (False, False),
    }


def test_pairs_on_the_real_corpus(scifact) -> None:
    corpus = read_corpus(scifact.corpus)
    pairs = direction_pairs(corpus, 400, seed=13)
    assert len(pairs) == 400
    assert pairs == direction_pairs(corpus, 400, seed=13)
    assert sum(p.supports for p in pairs) == 200
    for p in pairs[:40]:
        flipped = swap_direction(p.claim)
        assert flipped is not None and flipped != p.claim
        words, flipped_words = re.findall(r"[A-Za-z-]+", p.claim), re.findall(r"[A-Za-z-]+", flipped)
        changed = [a.lower() for a, b in zip(words, flipped_words, strict=False) if a != b]
        assert changed and (changed[0] in DIRECTION_WORDS or changed[0] in ("protects", "raises", "a"))


def test_load_aux_builds_the_corpus_set_without_files(tmp_path: Path) -> None:
    doc = _doc("Aspirin increased the rate of major bleeding in older adults compared with placebo.")
    pairs = load_aux(tmp_path, [("corpus_direction", 0)], [doc], seed=1)
    assert Counter(p.label for p in pairs) == Counter({0: 2, 1: 2})
    assert {p.source for p in pairs} == {"corpus_direction"}


def _tsv(
    path: Path, rows: list[tuple[str, str, str]], header: str = "sentence1\tsentence2\tgold_label"
) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(header + "\n" + "".join("\t".join(r) + "\n" for r in rows), encoding="utf-8")


def test_cad_snli_drops_snli_originals_and_duplicates(tmp_path: Path) -> None:
    (tmp_path / "snli").mkdir()
    (tmp_path / "snli" / "dev.jsonl").write_text(
        json.dumps({"premise": "A man rides.", "hypothesis": "A man moves.", "label": "entailment"}) + "\n",
        encoding="utf-8",
    )
    _tsv(tmp_path / "snli" / "test.tsv", [], header="premise\thypothesis\tlabel")
    _tsv(
        tmp_path / "cad_snli" / "train.tsv",
        [
            ("A man rides.", "A man moves.", "entailment"),  # an SNLI original: dropped
            ("A man sits.", "A man moves.", "contradiction"),
            ("A man sits.", "A man moves.", "contradiction"),  # a duplicate: dropped
            ("A man sits.", "A man is tired.", "neutral"),
        ],
    )
    _tsv(tmp_path / "cad_snli" / "dev.tsv", [("A dog runs.", "A dog moves.", "entailment")])
    _tsv(tmp_path / "cad_snli" / "test.tsv", [])
    pairs = load_cad_snli(tmp_path)
    assert [(p.claim, p.sentences[0], p.label) for p in pairs] == [
        ("A man moves.", "A man sits.", 1),
        ("A man is tired.", "A man sits.", 2),
        ("A dog moves.", "A dog runs.", 0),
    ]
    _tsv(tmp_path / "cad_snli" / "test.tsv", [], header="a\tb\tc")
    with pytest.raises(DataFormatError, match="expected header"):
        load_cad_snli(tmp_path)


def test_breaking_nli_keeps_antonym_and_synonym_swaps(tmp_path: Path) -> None:
    rows = [
        {
            "sentence1": "A tall man.",
            "sentence2": "A short man.",
            "gold_label": "contradiction",
            "category": "antonyms",
        },
        {
            "sentence1": "A big dog.",
            "sentence2": "A large dog.",
            "gold_label": "entailment",
            "category": "synonyms",
        },
        {
            "sentence1": "A red car.",
            "sentence2": "A blue car.",
            "gold_label": "contradiction",
            "category": "colors",
        },
    ]
    path = tmp_path / "dataset.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    pairs = load_breaking_nli(path)
    assert [(p.claim, p.label) for p in pairs] == [("A short man.", 1), ("A large dog.", 0)]
