"""Hand-checked cases of the per-claim judgement: cap variants, labels, duplicates, invalid entries."""

from __future__ import annotations

import numpy as np
import pytest

from sciverify.data.records import AbstractPrediction, Claim, EvidenceSet, Label, Prediction
from sciverify.errors import InputError
from sciverify.scoring import COUNT_COLUMNS, Entry, judge_claim, macro_metrics, parse_cap, score
from sciverify.scoring.counts import cap_for

S, C = Label.SUPPORT, Label.CONTRADICT


def claim(cid, evidence):
    return Claim(
        id=cid,
        text="",
        evidence={k: tuple(EvidenceSet(tuple(s), lab) for s in sets) for k, (lab, sets) in evidence.items()},
    )


def counts(j):
    return dict(zip(COUNT_COLUMNS, j.counts, strict=True))


def entry(key, label, sentences, valid=True):
    return Entry(key, label, tuple(sentences), len(sentences), None, valid)


def test_leaderboard_cap_admits_a_four_sentence_rationale_that_cap_three_refuses():
    gold = claim(1, {"7": (S, [[7, 8, 9, 10]])})
    pred = [entry("7", "SUPPORT", [7, 8, 9, 10])]
    board = judge_claim(gold, pred, "leaderboard")
    strict = judge_claim(gold, pred, 3)
    assert board.abstracts[0].cap == 4 and board.abstracts[0].rationalized
    assert strict.abstracts[0].cap == 3 and not strict.abstracts[0].rationalized
    assert counts(board)["abstract_correct_rationalized"] == 1
    assert counts(strict)["abstract_correct_rationalized"] == 0
    # sentence level is never capped
    assert counts(board)["sentence_correct_label"] == counts(strict)["sentence_correct_label"] == 4


def test_cap_uses_the_smallest_gold_set_and_the_listed_order():
    gold = claim(1, {"7": (S, [[1, 2, 3, 4, 5], [9]])})
    assert cap_for("leaderboard", [s.sentences for s in gold.evidence["7"]]) == 3
    late = judge_claim(gold, [entry("7", "SUPPORT", [0, 1, 2, 9])])  # [9] is fourth in the list
    early = judge_claim(gold, [entry("7", "SUPPORT", [9, 0, 1, 2])])
    assert not late.abstracts[0].rationalized
    assert early.abstracts[0].rationalized and early.abstracts[0].matched_set == (9,)


def test_wrong_label_keeps_selection_credit_but_not_label_credit():
    gold = claim(1, {"3": (C, [[0, 1]])})
    j = judge_claim(gold, [entry("3", "SUPPORT", [0, 1, 5])])
    c = counts(j)
    assert c["abstract_correct_label_only"] == 0 and c["abstract_correct_rationalized"] == 0
    assert c["sentence_correct_selection"] == 2 and c["sentence_correct_label"] == 0
    assert c["sentence_retrieved"] == 3


def test_duplicate_sentences_count_as_retrieved_but_are_judged_once():
    gold = claim(1, {"3": (S, [[4]])})
    j = judge_claim(gold, [entry("3", "SUPPORT", [4, 4, 4])])
    c = counts(j)
    assert c["sentence_retrieved"] == 3 and c["sentence_correct_selection"] == 1
    assert j.abstracts[0].sentences[0].times_listed == 3


def test_invalid_entry_counts_as_retrieved_and_is_never_correct():
    gold = claim(1, {"3": (S, [[4]])})
    j = judge_claim(gold, [entry("3", "REFUTES", [4], valid=False)])
    assert counts(j) == {
        **dict.fromkeys(COUNT_COLUMNS, 0),
        "abstract_relevant": 1,
        "abstract_retrieved": 1,
        "sentence_relevant": 1,
        "sentence_retrieved": 1,
    }


def test_claim_without_prediction_predicts_nothing():
    gold = claim(1, {"3": (S, [[4, 5]]), "8": (C, [[1]])})
    j = judge_claim(gold, None)
    assert not j.has_prediction and j.missed == ("3", "8")
    assert counts(j)["abstract_relevant"] == 2 and counts(j)["sentence_relevant"] == 3
    assert sum(j.counts) == 5


def test_score_joins_by_id_and_rejects_unknown_or_repeated_claims():
    golds = [claim(1, {"3": (S, [[4]])}), claim("x2", {})]
    preds = [Prediction("x2", {"3": AbstractPrediction(S, (4,))}), Prediction(1, {})]
    report = score(golds, preds)
    assert report.claim_ids == (1, "x2")
    assert report.per_claim[1].counts[1] == 1  # x2 retrieved one (wrong) abstract
    with pytest.raises(InputError, match="not among the gold"):
        score(golds, [Prediction(5, {})])
    with pytest.raises(InputError, match="two predictions"):
        score(golds, [Prediction(1, {}), Prediction(1, {})])


def test_macro_average_skips_claims_without_gold_evidence():
    golds = [claim(1, {"3": (S, [[4]])}), claim(2, {"5": (S, [[0]])}), claim(3, {})]
    preds = [
        Prediction(1, {"3": AbstractPrediction(S, (4,))}),
        Prediction(3, {"9": AbstractPrediction(S, (1,))}),
    ]
    report = score(golds, preds)
    macro = macro_metrics(report.counts)["abstract_rationalized"]
    assert macro.n_claims == 2
    assert (macro.precision, macro.recall, macro.f1) == (0.5, 0.5, 0.5)  # claim 1 perfect, claim 2 zero
    micro = report.aggregate["abstract_rationalized"]
    assert (micro.precision, micro.recall) == (0.5, 0.5)  # the NEI claim's wrong abstract counts in micro


def test_macro_with_no_qualifying_claims_is_zero():
    m = macro_metrics(np.zeros((2, 8), dtype=np.int64))
    assert all(v.n_claims == 0 and v.f1 == 0.0 for v in m.values())


@pytest.mark.parametrize(
    "value, expected", [("leaderboard", "leaderboard"), ("3", 3), (3, 3), (" LEADERBOARD ", "leaderboard")]
)
def test_parse_cap(value, expected):
    assert parse_cap(value) == expected


@pytest.mark.parametrize("value", ["0", "-1", "three", 0, True, ""])
def test_parse_cap_rejects(value):
    with pytest.raises(ValueError, match="cap must be"):
        parse_cap(value)
