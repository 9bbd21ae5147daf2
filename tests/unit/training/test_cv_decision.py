"""The cross-fitted decision layer: a fold's predictions never depend on that fold's gold labels."""

from __future__ import annotations

import numpy as np

from sciverify.data.records import Claim, EvidenceSet, Label
from sciverify.decision.candidates import CandidateOutputs, ClaimOutputs
from sciverify.decision.rule import objective, picks, to_prediction
from sciverify.decision.sentence_rule import possible_reads
from sciverify.decision.settings import learned_decision
from sciverify.training.cv import choose_decision, cross_fit_decision
from sciverify.training.cv.decision import fit_read_setting

GRID = {"sentence_threshold": (0.3, 0.5), "emit_threshold": (0.3, 0.5, 0.7), "max_emitted": (1, 2)}


def _claim(
    claim: Claim,
    fold: int,
    scores: list[np.ndarray],
    top1: list[np.ndarray],
    top2: list[np.ndarray | None],
) -> ClaimOutputs:
    """Outputs as the label files store them: probabilities reading the best sentence and the best two."""
    candidates = []
    for i, s in enumerate(scores):
        reads = dict(zip(possible_reads(s, 2), (top1[i], top2[i]), strict=False))
        label_reads = {k: v for k, v in reads.items() if v is not None}
        candidates.append(CandidateOutputs(f"d{i}", 1.0 - 0.1 * i, s, label_reads))
    return ClaimOutputs(claim, tuple(candidates), fold)


def _outputs(flip_fold: int | None = None, seed: int = 0) -> list[ClaimOutputs]:
    """60 claims in 3 folds, 4 candidates each; candidate 0 is the evidence abstract (sentence 1 its
    rationale) for two claims in three, and its scores say so, noisily."""
    rng = np.random.default_rng(seed)
    out = []
    for n in range(60):
        fold = n % 3
        has = n % 3 != 2
        label = Label.SUPPORT if n % 2 else Label.CONTRADICT
        doc = "d0"
        if flip_fold == fold and has:  # a different gold for this fold only: other label, other abstract
            label = Label.CONTRADICT if label is Label.SUPPORT else Label.SUPPORT
            doc = "d1"
        evidence = {doc: (EvidenceSet((1,), label),)} if has else {}
        claim = Claim(id=n, text=f"claim {n}", evidence=evidence, cited_doc_ids=("d0",))
        scores, top1, top2 = [], [], []
        for i in range(4):
            s = rng.uniform(0.0, 0.4, size=5).astype(np.float32)
            p = np.array([0.2, 0.2, 0.6], dtype=np.float32)
            if i == 0 and n % 3 != 2:
                s[1] = rng.uniform(0.5, 1.0)
                p = np.array([0.7, 0.2, 0.1] if n % 2 else [0.2, 0.7, 0.1], dtype=np.float32)
            scores.append(s)
            top1.append(p)
            top2.append(p)
        out.append(_claim(claim, fold, scores, top1, top2))
    return out


def test_a_folds_predictions_do_not_depend_on_its_own_gold() -> None:
    base, _ = cross_fit_decision(_outputs(), 4, GRID)
    flipped, _ = cross_fit_decision(_outputs(flip_fold=1), 4, GRID)
    fold_of = {c.claim.id: c.fold for c in _outputs()}
    for a, b in zip(base, flipped, strict=True):
        if fold_of[a.id] == 1:
            assert a == b  # fold 1's gold changed, but nothing fitted on fold 1 judged it
    # the other folds' decisions were fitted on fold 1's (changed) gold, so the test is not vacuous
    assert base != flipped


def test_informative_outputs_give_correct_verdicts_and_the_grid_is_respected() -> None:
    outputs = _outputs()
    preds, chosen = cross_fit_decision(outputs, 4, GRID)
    assert [c["fold"] for c in chosen] == [0, 1, 2]
    assert all(c["sentence_threshold"] in GRID["sentence_threshold"] for c in chosen)
    right = 0
    for c, p in zip(outputs, preds, strict=True):
        if c.claim.evidence:
            got = p.evidence.get("d0")
            right += int(
                got is not None and got.label == c.claim.evidence["d0"][0].label and 1 in got.sentences
            )
    assert right >= 35  # of 40 claims with evidence
    choice = choose_decision(outputs, 4, GRID)
    assert choice.objective > 0.8


def test_the_oracle_decision_emits_exactly_the_gold_abstracts_among_the_candidates() -> None:
    from sciverify.scoring import score
    from sciverify.training.cv import oracle_predictions

    outputs = _outputs()
    preds = oracle_predictions(outputs, 4, threshold=0.5)
    for c, p in zip(outputs, preds, strict=True):
        assert set(p.evidence) == set(c.claim.evidence)  # the gold abstract is always candidate d0 here
        for doc, verdict in p.evidence.items():
            assert verdict.sentences == (1,)  # the one sentence above 0.5
            # the label model's S-or-C choice: 0.7 on the gold label's side in these outputs
            assert verdict.label == c.claim.evidence[doc][0].label
    agg = score([c.claim for c in outputs], preds).aggregate
    assert agg["abstract_rationalized"].f1 == 1.0 and agg["sentence_label"].f1 == 1.0
    # with gold labels forced, a label model that always says CONTRADICT no longer costs anything
    wrong = [
        _claim(c.claim, c.fold, c.scores, [np.array([0.1, 0.8, 0.1], dtype=np.float32)] * 4, [None] * 4)
        for c in outputs
    ]
    assert (
        score([c.claim for c in wrong], oracle_predictions(wrong, 4)).aggregate["abstract_label_only"].f1
        < 1.0
    )
    fixed = oracle_predictions(wrong, 4, gold_label=True)
    assert score([c.claim for c in wrong], fixed).aggregate["abstract_label_only"].f1 == 1.0


def test_the_choice_is_the_best_setting_scored_through_the_serving_rule() -> None:
    """choose_decision ranks once per read setting and cuts that ranking for each emit threshold and cap;
    scoring every setting through ``picks`` (serving's path) must find the same best and the same value."""
    outputs = [c for c in _outputs(seed=3) if c.fold != 2]
    grid = {"sentence_threshold": (0.3, 0.5), "emit_threshold": (0.1, 0.4, 0.6, 0.9), "max_emitted": (1, 3)}
    choice = choose_decision(outputs, 4, grid)
    claims = [c.claim for c in outputs]
    values = {}
    for t in grid["sentence_threshold"]:
        fitted = fit_read_setting(outputs, 4, {"sentence_threshold": t})
        for e in grid["emit_threshold"]:
            for m in grid["max_emitted"]:
                s = learned_decision({"sentence_threshold": t, "emit_threshold": e, "max_emitted": m}, 4)
                preds = [
                    to_prediction(c.claim.id, c.doc_ids, picks(c.candidates, p, s, emit_probs=q))
                    for c, p, q in zip(fitted.outputs, fitted.reads.probs, fitted.emit_probs, strict=True)
                ]
                values[(t, e, m)] = objective(claims, preds)
    best = max(values.values())
    assert choice.objective == best
    first = next(key for key, v in values.items() if v > best - 1e-12)  # the grid's first best, as chosen
    assert tuple(choice.settings[k] for k in ("sentence_threshold", "emit_threshold", "max_emitted")) == first
    assert len(set(values.values())) > 1  # the settings differ in what they score, so the test can fail
