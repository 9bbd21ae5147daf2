"""Property tests of the scorer, and parity with a plain-loop reference written here from the definitions."""

from __future__ import annotations

import math
import random

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from sciverify.data.records import AbstractPrediction, Claim, EvidenceSet, Label, Prediction
from sciverify.scoring import (
    FAMILIES,
    bootstrap,
    bootstrap_totals,
    micro_metrics,
    resample_indices,
    score,
)
from sciverify.scoring.metrics import metric_arrays, prf

DOCS = [str(i) for i in range(1, 7)]
S, C = Label.SUPPORT, Label.CONTRADICT
LABELS = [S, C]


@st.composite
def gold_claims(draw, max_claims: int = 8) -> list[Claim]:
    n = draw(st.integers(1, max_claims))
    claims = []
    for cid in range(n):
        docs = draw(st.lists(st.sampled_from(DOCS), unique=True, max_size=3))
        evidence = {}
        for doc in docs:
            label = draw(st.sampled_from(LABELS))
            sets = draw(
                st.lists(
                    st.lists(st.integers(0, 9), min_size=1, max_size=5, unique=True), min_size=1, max_size=3
                )
            )
            evidence[doc] = tuple(EvidenceSet(tuple(s), label) for s in sets)
        claims.append(Claim(id=cid, text="", evidence=evidence))
    return claims


@st.composite
def predictions_for(draw, golds: list[Claim]) -> list[Prediction]:
    preds = []
    for claim in golds:
        if not draw(st.booleans()) and draw(st.booleans()):
            continue  # about a quarter of the claims get no prediction
        docs = draw(st.lists(st.sampled_from(DOCS), unique=True, max_size=4))
        evidence = {}
        for doc in docs:
            label = draw(st.sampled_from(LABELS))
            sentences = tuple(draw(st.lists(st.integers(0, 11), max_size=7)))
            confidence = draw(st.one_of(st.none(), st.floats(0, 1)))
            evidence[doc] = AbstractPrediction(label, sentences, confidence)
        preds.append(Prediction(id=claim.id, evidence=evidence))
    return preds


@st.composite
def gold_and_predictions(draw):
    golds = draw(gold_claims())
    return golds, draw(predictions_for(golds))


def reference_metrics(golds: list[Claim], preds: list[Prediction], cap_policy) -> dict[str, tuple]:
    """The SciFact metrics computed the long way, one loop per definition."""
    by_id = {p.id: p for p in preds}
    relevant_abstracts = relevant_sentences = 0
    retrieved_abstracts = retrieved_sentences = 0
    label_only = rationalized = selection = sentence_label = 0
    for gold in golds:
        relevant_abstracts += len(gold.evidence)
        for sets in gold.evidence.values():
            for s in sets:
                relevant_sentences += len(s.sentences)
        pred = by_id.get(gold.id)
        if pred is None:
            continue
        for doc, ap in pred.evidence.items():
            retrieved_abstracts += 1
            retrieved_sentences += len(ap.sentences)
            if doc not in gold.evidence:
                continue
            gold_sets = [set(s.sentences) for s in gold.evidence[doc]]
            gold_label = gold.evidence[doc][0].label
            right_label = ap.label == gold_label
            if right_label:
                label_only += 1
                if cap_policy == "leaderboard":
                    cap = max(3, min(len(s.sentences) for s in gold.evidence[doc]))
                else:
                    cap = cap_policy
                first = set(ap.sentences[:cap])
                if any(s <= first for s in gold_sets):
                    rationalized += 1
            chosen = set(ap.sentences)
            good = 0
            for ix in chosen:
                if any(ix in s and s <= chosen for s in gold_sets):
                    good += 1
            selection += good
            if right_label:
                sentence_label += good

    def f(correct, retrieved, relevant):
        p = correct / retrieved if retrieved else 0.0
        r = correct / relevant if relevant else 0.0
        return (p, r, 2 * p * r / (p + r) if p + r else 0.0)

    return {
        "abstract_label_only": f(label_only, retrieved_abstracts, relevant_abstracts),
        "abstract_rationalized": f(rationalized, retrieved_abstracts, relevant_abstracts),
        "sentence_selection": f(selection, retrieved_sentences, relevant_sentences),
        "sentence_label": f(sentence_label, retrieved_sentences, relevant_sentences),
    }


def as_tuples(report) -> dict[str, tuple]:
    return {
        f: (report.aggregate[f].precision, report.aggregate[f].recall, report.aggregate[f].f1)
        for f in FAMILIES
    }


@settings(max_examples=150, deadline=None)
@given(gold_and_predictions(), st.sampled_from(["leaderboard", 3, 2]))
def test_parity_with_reference_loops(case, cap):
    golds, preds = case
    assert as_tuples(score(golds, preds, cap=cap)) == reference_metrics(golds, preds, cap)


@settings(max_examples=100, deadline=None)
@given(gold_and_predictions())
def test_every_metric_is_in_unit_interval(case):
    report = score(*case)
    for family in FAMILIES:
        for value in (*as_tuples(report)[family], report.macro[family].precision, report.macro[family].f1):
            assert 0.0 <= value <= 1.0


@settings(max_examples=60, deadline=None)
@given(gold_and_predictions(), st.randoms(use_true_random=False))
def test_claim_order_changes_nothing(case, rnd: random.Random):
    golds, preds = case
    before = score(golds, preds)
    g2, p2 = list(golds), list(preds)
    rnd.shuffle(g2)
    rnd.shuffle(p2)
    after = score(g2, p2)
    assert as_tuples(before) == as_tuples(after)
    for family in FAMILIES:
        assert math.isclose(before.macro[family].f1, after.macro[family].f1, abs_tol=1e-12)


@settings(max_examples=100, deadline=None)
@given(gold_and_predictions(), st.data())
def test_an_extra_wrong_abstract_never_raises_precision(case, data):
    golds, preds = case
    if not preds:
        return
    i = data.draw(st.integers(0, len(preds) - 1))
    target = preds[i]
    extra = AbstractPrediction(
        data.draw(st.sampled_from(LABELS)), tuple(data.draw(st.lists(st.integers(0, 11), max_size=5)))
    )
    worse = list(preds)
    worse[i] = Prediction(target.id, {**target.evidence, "999": extra})  # never a gold evidence doc
    a, b = score(golds, preds), score(golds, worse)
    for family in FAMILIES:
        assert b.aggregate[family].precision <= a.aggregate[family].precision
        assert b.aggregate[family].recall == a.aggregate[family].recall


@settings(max_examples=30, deadline=None)
@given(gold_and_predictions(), st.integers(0, 2**32 - 1))
def test_bootstrap_is_reproducible_with_its_seed(case, seed):
    counts = score(*case).counts
    first = bootstrap(counts, n_boot=200, seed=seed)
    second = bootstrap(counts, n_boot=200, seed=seed)
    assert first == second


@settings(max_examples=40, deadline=None)
@given(gold_and_predictions(), st.integers(0, 1000))
def test_bootstrap_totals_equal_a_plain_loop(case, seed):
    counts = score(*case).counts
    indices = resample_indices(len(counts), 300, seed)
    totals = bootstrap_totals(counts, indices)
    for b in range(0, 300, 37):
        assert list(totals[b]) == [sum(int(counts[i, k]) for i in indices[b]) for k in range(counts.shape[1])]


def test_vectorised_metrics_equal_scalar_metrics_bit_for_bit():
    rng = np.random.default_rng(7)
    totals = rng.integers(0, 60, size=(2000, 8))
    arrays = metric_arrays(totals)
    for row in range(0, 2000, 13):
        t = [int(x) for x in totals[row]]
        for family, (c, ret, rel) in {
            "abstract_label_only": (2, 1, 0),
            "abstract_rationalized": (3, 1, 0),
            "sentence_selection": (6, 5, 4),
            "sentence_label": (7, 5, 4),
        }.items():
            expected = prf(t[c], t[ret], t[rel])
            got = (arrays[family]["precision"][row], arrays[family]["recall"][row], arrays[family]["f1"][row])
            assert got == (expected.precision, expected.recall, expected.f1)


def test_micro_metrics_of_empty_counts_are_zero():
    metrics = micro_metrics(np.zeros((3, 8), dtype=np.int64))
    assert all(m.precision == m.recall == m.f1 == 0.0 for m in metrics.values())


def test_bootstrap_totals_stay_exact_for_large_counts():
    """Totals beyond float32's exact range take the float64 path and still equal integer sums."""
    rng = np.random.default_rng(3)
    counts = rng.integers(0, 2**22, size=(40, 8))
    indices = resample_indices(40, 50, 1)
    totals = bootstrap_totals(counts, indices)
    expected = np.stack([counts[row].sum(axis=0) for row in indices])
    assert np.array_equal(totals, expected.astype(np.float64))


def test_parity_on_real_training_claims_with_perturbed_oracle(scifact):
    """All 809 training claims, oracle predictions with labels flipped, sentences dropped, added and
    reordered, and abstracts removed or added: vectorised scorer == reference loops, both caps."""
    from sciverify.scoring import load_gold, oracle_predictions

    golds = list(load_gold(scifact.train))
    rnd = random.Random(0)
    preds = []
    for pred in oracle_predictions(golds, "gold"):
        evidence = {}
        for key, ap in pred.evidence.items():
            if rnd.random() < 0.15:
                continue
            label = ap.label if rnd.random() < 0.8 else (C if ap.label == S else S)
            sentences = [i for i in ap.sentences if rnd.random() < 0.8] + rnd.sample(
                range(12), rnd.randint(0, 2)
            )
            rnd.shuffle(sentences)
            evidence[key] = AbstractPrediction(label, tuple(sentences))
        if rnd.random() < 0.4:
            evidence[str(rnd.randint(1, 10**7))] = AbstractPrediction(S, (0, 1))
        if rnd.random() < 0.95:
            preds.append(Prediction(pred.id, evidence))
    for cap in ("leaderboard", 3):
        got = as_tuples(score(golds, preds, cap=cap))
        assert got == reference_metrics(golds, preds, cap)
        assert all(0.3 < value < 0.95 for family in got.values() for value in family)  # a non-trivial case
