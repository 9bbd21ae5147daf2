"""The leaderboard's published worked example (claim 52), scored from files exactly as a submitter would."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from sciverify.data.io import read_claims, read_predictions
from sciverify.scoring import evaluate_files, load_gold, oracle_predictions, score, write_outputs

DATA = Path(__file__).parent / "data"
GOLD = DATA / "worked_example_gold.jsonl"
PRED = DATA / "worked_example_pred.jsonl"


def _check_worked_example(aggregate):
    for family in ("abstract_label_only", "abstract_rationalized"):
        assert aggregate[family].precision == 1 / 2
        assert aggregate[family].recall == 1 / 2
        assert aggregate[family].f1 == 1 / 2
    for family in ("sentence_selection", "sentence_label"):
        assert aggregate[family].precision == 1 / 5
        assert aggregate[family].recall == 1 / 4
        assert math.isclose(aggregate[family].f1, 2 / 9, rel_tol=1e-15)
        # the leaderboard's float order: 2 * P * R / (P + R)
        assert aggregate[family].f1 == 2 * 0.2 * 0.25 / (0.2 + 0.25)


def test_worked_example_from_files_lenient():
    result = evaluate_files(GOLD, PRED, n_boot=0)
    _check_worked_example(result.report.aggregate)
    assert result.report.totals() == {
        "abstract_relevant": 2,
        "abstract_retrieved": 2,
        "abstract_correct_label_only": 1,
        "abstract_correct_rationalized": 1,
        "sentence_relevant": 4,
        "sentence_retrieved": 5,
        "sentence_correct_selection": 1,
        "sentence_correct_label": 1,
    }
    # "REFUTES" is not a leaderboard label: reported with a hint, kept as a wrong abstract
    assert len(result.problems) == 1
    problem = result.problems[0]
    assert problem.file == str(PRED) and problem.line == 1
    assert "REFUTES" in problem.message and "CONTRADICT" in problem.message


def test_worked_example_with_valid_label_scores_the_same(tmp_path):
    """Doc 16 is not gold evidence, so any valid label gives the same numbers as the invalid one."""
    pred = tmp_path / "pred.jsonl"
    pred.write_text(PRED.read_text().replace("REFUTES", "CONTRADICT"))
    result = evaluate_files(GOLD, pred, n_boot=0, strict=True)
    assert result.problems == ()
    _check_worked_example(result.report.aggregate)
    _check_worked_example(score(read_claims(GOLD), read_predictions(pred)).aggregate)


def test_worked_example_debug_explains_each_sentence(tmp_path):
    written = write_outputs(evaluate_files(GOLD, PRED, n_boot=0), tmp_path)
    debug = written["debug"].read_text()
    assert "sentence 1: incorrect: in gold set [0, 1] but 0 not predicted" in debug
    assert "sentence 11: correct selection, correct label: gold set [11] fully predicted" in debug
    assert "sentence 13: incorrect: not in any gold set" in debug
    assert "doc 16 is not a gold evidence abstract" in debug
    assert "rationalized: gold set [11] within the first 3 sentences [1, 11, 13]" in debug
    assert "missed gold abstracts:\n  doc 15  SUPPORT  sets: [4]" in debug


def test_oracle_on_real_training_claims(scifact):
    """On all 809 training claims: oracle with gold rationales is perfect under the leaderboard cap; the
    strict cap of 3 loses exactly the abstract whose only gold rationale has four sentences."""
    golds = load_gold(scifact.train)
    perfect = score(golds, oracle_predictions(golds, "gold"))
    assert all(perfect.aggregate[f].f1 == 1.0 for f in perfect.aggregate)
    capped = score(golds, oracle_predictions(golds, "gold"), cap=3)
    totals = capped.totals()
    assert totals["abstract_correct_rationalized"] == totals["abstract_relevant"] - 1
    assert [j.claim_id for j in capped.per_claim if j.counts[3] < j.counts[0]] == [264]
    none = score(golds, oracle_predictions(golds, "none"))
    assert none.aggregate["abstract_label_only"].f1 == 1.0
    assert none.aggregate["abstract_rationalized"].f1 == 0.0
    assert none.aggregate["sentence_selection"].f1 == 0.0


@pytest.mark.parametrize("rationales", ["gold", "none"])
def test_oracle_with_corpus_is_valid(scifact, rationales, tmp_path):
    from sciverify.data.io import write_predictions

    golds = load_gold(scifact.train)
    pred = tmp_path / "oracle.jsonl"
    write_predictions(pred, oracle_predictions(golds, rationales))
    result = evaluate_files(scifact.train, pred, scifact.corpus, strict=True, n_boot=0)
    assert result.problems == ()
