"""Average precision, confusion matrix, bootstrap intervals and the paired bootstrap."""

from __future__ import annotations

import numpy as np
import pytest

from sciverify.data.records import AbstractPrediction, Claim, EvidenceSet, Label, Prediction
from sciverify.errors import InputError
from sciverify.scoring import (
    FAMILIES,
    bootstrap,
    confusion_matrix,
    paired_bootstrap,
    paired_bootstrap_counts,
    rank_abstracts,
    score,
)

S, C = Label.SUPPORT, Label.CONTRADICT


def gold(cid, docs):
    return Claim(id=cid, text="", evidence={d: (EvidenceSet((0,), lab),) for d, lab in docs.items()})


def test_average_precision_of_the_ranked_list_r_n_r_r_n_r():
    """Five gold abstracts, ranking R N R R N R: AP = (1 + 2/3 + 3/4 + 4/6) / 5."""
    golds = [gold(1, {"a": S, "b": S, "c": S}), gold(2, {"d": C, "e": C})]
    right, wrong = (0,), (5,)
    preds = [
        Prediction(
            1,
            {
                "a": AbstractPrediction(S, right, 0.9),
                "x": AbstractPrediction(S, right, 0.8),
                "b": AbstractPrediction(S, right, 0.7),
            },
        ),
        Prediction(
            2,
            {
                "d": AbstractPrediction(C, right, 0.6),
                "e": AbstractPrediction(C, wrong, 0.5),
                "c": AbstractPrediction(S, right, 0.4),
            },
        ),
    ]
    # claim 2's "c" is not gold for claim 2; claim 1's "c" is missed. Relevance by rank: R N R R N N.
    result = rank_abstracts(score(golds, preds).per_claim)
    assert result.average_precision == pytest.approx((1 + 2 / 3 + 3 / 4) / 5)
    preds[1] = Prediction(
        2,
        {
            "d": AbstractPrediction(C, right, 0.6),
            "y": AbstractPrediction(C, wrong, 0.5),
            "e": AbstractPrediction(C, right, 0.4),
        },
    )
    result = rank_abstracts(score(golds, preds).per_claim)
    assert result.average_precision == pytest.approx((1 + 2 / 3 + 3 / 4 + 4 / 6) / 5)
    assert result.n_ranked == 6 and result.n_relevant == 5
    assert result.curve[-1][:2] == pytest.approx((4 / 5, 4 / 6))


def test_average_precision_needs_every_confidence():
    golds = [gold(1, {"a": S})]
    preds = [Prediction(1, {"a": AbstractPrediction(S, (0,), 0.9), "b": AbstractPrediction(S, (0,))})]
    result = rank_abstracts(score(golds, preds).per_claim)
    assert result.average_precision is None
    assert result.reason == "no confidences: 1 of 2 predicted abstracts have no 'confidence'"


def test_confusion_matrix_cells():
    golds = [gold(1, {"a": S, "b": C}), gold(2, {"c": C})]
    preds = [
        Prediction(1, {"a": AbstractPrediction(C, ()), "z": AbstractPrediction(S, ())}),
        Prediction(2, {"c": AbstractPrediction(C, ())}),
    ]
    cells = confusion_matrix(score(golds, preds).per_claim).as_dict()
    assert cells["SUPPORT"] == {"SUPPORT": 0, "CONTRADICT": 1, "invalid entry": 0, "not predicted": 0}
    assert cells["CONTRADICT"] == {"SUPPORT": 0, "CONTRADICT": 1, "invalid entry": 0, "not predicted": 1}
    assert cells["NEI (not gold)"] == {
        "SUPPORT": 1,
        "CONTRADICT": 0,
        "invalid entry": 0,
        "not predicted": None,
    }


def _counts(seed: int, n: int = 120) -> np.ndarray:
    rng = np.random.default_rng(seed)
    relevant = rng.integers(0, 3, n)
    retrieved = rng.integers(0, 4, n)
    correct = np.minimum(relevant, retrieved) * rng.integers(0, 2, n)
    s_rel, s_ret = relevant * 2, retrieved * 3
    s_cor = np.minimum(s_rel, s_ret) * rng.integers(0, 2, n)
    return np.stack([relevant, retrieved, correct, correct, s_rel, s_ret, s_cor, s_cor], axis=1)


def test_bootstrap_interval_brackets_the_observed_value_and_seed_matters():
    counts = _counts(1)
    a = bootstrap(counts, n_boot=2000, seed=3)
    b = bootstrap(counts, n_boot=2000, seed=4)
    observed = score_totals_f1(counts)
    for family in FAMILIES:
        s = a.stats[family]["f1"]
        assert s.low <= observed[family] <= s.high
        assert 0 < s.std < 0.2
    assert a.stats != b.stats


def score_totals_f1(counts):
    from sciverify.scoring import micro_metrics

    return {f: m.f1 for f, m in micro_metrics(counts).items()}


def test_paired_bootstrap_of_a_system_with_itself():
    counts = _counts(2)
    result = paired_bootstrap_counts(counts, counts, n_boot=500, seed=0)
    for family in FAMILIES:
        s = result.stats[family]["f1"]
        assert s.diff == s.low == s.high == 0.0 and s.p_value == 1.0


def test_paired_bootstrap_detects_a_clearly_better_system():
    worse = _counts(5)
    better = worse.copy()
    better[:, 2] = np.minimum(better[:, 0], better[:, 1])  # every retrievable relevant abstract now correct
    result = paired_bootstrap_counts(better, worse, n_boot=2000, seed=0)
    s = result.stats["abstract_label_only"]["f1"]
    assert s.diff > 0 and s.low > 0 and s.p_value < 0.01
    # the same resamples are used for both systems: the individual bootstrap with that seed agrees
    alone = bootstrap(better, n_boot=2000, seed=0).stats["abstract_label_only"]["f1"]
    assert alone.mean == pytest.approx(
        float(s.mean_diff) + bootstrap(worse, n_boot=2000, seed=0).stats["abstract_label_only"]["f1"].mean
    )


def test_paired_bootstrap_requires_the_same_claims():
    g1 = [gold(1, {"a": S})]
    g2 = [gold(2, {"a": S})]
    with pytest.raises(InputError, match="same gold claims"):
        paired_bootstrap(score(g1, []), score(g2, []), n_boot=10)
    with pytest.raises(InputError, match="at least 1"):
        bootstrap(_counts(0), n_boot=0)


def test_reliability_table_by_hand():
    """Confidences 0.9 (gold, right), 0.85 (not gold), 0.8 (gold, wrong sentence), 0.3 (gold, right):
    bin 0.8-0.9 holds 0.85 and 0.8; bin 0.9-1.0 holds 0.9; bin 0.3-0.4 holds 0.3."""
    golds = [gold(1, {"a": S, "b": S}), gold(2, {"d": C})]
    preds = [
        Prediction(1, {"a": AbstractPrediction(S, (0,), 0.9), "x": AbstractPrediction(S, (0,), 0.85)}),
        Prediction(2, {"d": AbstractPrediction(C, (5,), 0.8)}),
    ]
    preds[0].evidence["b"] = AbstractPrediction(S, (0,), 0.3)
    result = rank_abstracts(score(golds, preds).per_claim)
    bins = {(round(b.low, 1), round(b.high, 1)): b for b in result.reliability}
    assert set(bins) == {(0.3, 0.4), (0.8, 0.9), (0.9, 1.0)}
    mid = bins[(0.8, 0.9)]
    assert (mid.n, mid.evidence_rate, mid.correct_rate) == (2, 0.5, 0.0)
    assert mid.mean_confidence == pytest.approx(0.825)
    assert bins[(0.9, 1.0)].correct_rate == 1.0 and bins[(0.3, 0.4)].evidence_rate == 1.0
    # ECE: (1/4)|0.9-1| + (2/4)|0.825-0.5| + (1/4)|0.3-1|
    assert result.ece == pytest.approx(0.25 * 0.1 + 0.5 * 0.325 + 0.25 * 0.7)
