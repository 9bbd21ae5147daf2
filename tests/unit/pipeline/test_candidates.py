"""The one path from model outputs to predictions: which sentences the label model reads, stored reads,
the emit model, and the records the cross-validation keeps on disk (with a per-sentence reader's stance)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from sciverify.data.records import Claim, EvidenceSet, Label
from sciverify.decision.candidates import CandidateOutputs
from sciverify.decision.rule import (
    emit_rows,
    label_requests,
    picks,
    stored_label_probs,
    to_prediction,
    with_reader,
)
from sciverify.decision.sentence_rule import possible_reads, read_sentences
from sciverify.decision.settings import NO_EVIDENCE, DecisionConfig
from sciverify.errors import ConfigError
from sciverify.models.emit import EMIT_FEATURES, EmitModel
from sciverify.training.cv.outputs import load_outputs

LEARNED = DecisionConfig(
    sentence_threshold=0.4,
    max_sentences=2,
    max_listed=3,
    min_rationale_score=0.0,
    max_labelled=5,
    emit_threshold=0.5,
    rationale_power=0.0,
    max_emitted=2,
    confidence="learned",
)


def _scores(*values: float) -> np.ndarray:
    return np.asarray(values, dtype=np.float32)


def test_reads_are_prefixes_of_the_ranking_in_abstract_order() -> None:
    s = _scores(0.1, 0.9, 0.5, 0.5)
    assert possible_reads(s, 2) == [(1,), (1, 2)]  # ties: the earlier sentence first
    assert possible_reads(_scores(0.3), 2) == [(0,)] and possible_reads(_scores(), 2) == []
    assert read_sentences(s, LEARNED) == (1, 2)  # both above 0.4, at most two
    assert read_sentences(_scores(0.1, 0.9, 0.3), LEARNED) == (1,)  # the second below the threshold
    assert read_sentences(_scores(0.1, 0.2), LEARNED) == (1,)  # none above: learned mode reads the best


def test_stored_reads_answer_the_rules_requests_and_an_unread_set_is_no_evidence() -> None:
    two = np.array([0.6, 0.3, 0.1], np.float32)
    one = np.array([0.2, 0.2, 0.6], np.float32)
    cands = [
        CandidateOutputs("1", 3.0, _scores(0.9, 0.5), {(0,): one, (0, 1): two}),
        CandidateOutputs("2", 2.0, _scores(0.9, 0.1), {(0,): one, (0, 1): two}),
        CandidateOutputs("3", 1.0, _scores()),  # no sentences: never labelled
        CandidateOutputs("4", 0.5, _scores(0.7)),  # nothing stored for it
    ]
    assert label_requests([c.scores for c in cands], LEARNED) == [(0, (0, 1)), (1, (0,)), (3, (0,))]
    probs = stored_label_probs(cands, LEARNED)
    assert set(probs) == {0, 1, 3}
    np.testing.assert_array_equal(probs[0], two)
    np.testing.assert_array_equal(probs[1], one)
    np.testing.assert_array_equal(probs[3], NO_EVIDENCE)


def _read_candidate(
    stance: np.ndarray, rationale: np.ndarray
) -> tuple[CandidateOutputs, dict[tuple[int, ...], np.ndarray]]:
    """Three sentences the selector ranks 0, 1, 2, the label model's stored reads of its best one and two,
    and the reader's outputs for all three."""
    stored = {(0,): np.array([0.2, 0.2, 0.6], np.float32), (0, 1): np.array([0.7, 0.2, 0.1], np.float32)}
    return CandidateOutputs("1", 1.0, _scores(0.9, 0.6, 0.2), stored, stance, rationale), stored


def test_a_blended_listing_leaves_the_label_model_reading_the_selectors_own_best_sentences() -> None:
    # the reader's P(rationale) lifts sentence 2 above sentence 1 in the blended scores; the label model
    # still reads the selector's best two (what its stored outputs hold), the reader its blended ones
    stance = np.array([[0.1, 0.8, 0.1], [0.1, 0.1, 0.8], [0.8, 0.1, 0.1]], np.float32)
    cand, stored = _read_candidate(stance, np.array([0.9, 0.0, 1.0], np.float32))
    model = replace(LEARNED, reader_reads=3, reader_weight=1.0, label_source="model")
    reader = replace(model, label_source="reader")
    assert label_requests([cand.label_scores(model)], model) == [(0, (0, 1))]
    np.testing.assert_array_equal(stored_label_probs([cand], model)[0], stored[(0, 1)])
    assert label_requests([cand.label_scores(reader)], reader) == [(0, (0, 2))]
    assert list(np.argsort(-cand.decision_scores(model))[:2]) == [2, 0]  # what is listed is blended


def test_both_stance_models_average_over_the_label_models_sentences() -> None:
    # the label model reads the selector's best two; the reader's stance over those same two (weighted by
    # its P(rationale)) is averaged with the label model's answer, whatever the blended listing says
    stance = np.array([[0.1, 0.8, 0.1], [0.5, 0.3, 0.2], [0.8, 0.1, 0.1]], np.float32)
    cand, stored = _read_candidate(stance, np.array([0.75, 0.25, 1.0], np.float32))
    both = replace(LEARNED, reader_reads=3, reader_weight=1.0, label_source="both")
    assert label_requests([cand.label_scores(both)], both) == [(0, (0, 1))]
    reader_side = (0.75 * stance[0] + 0.25 * stance[1]) / 1.0
    expected = (stored[(0, 1)] + reader_side) / 2.0
    got = stored_label_probs([cand], both)[0]
    np.testing.assert_allclose(got, expected, atol=1e-6)
    assert got.sum() == pytest.approx(1.0) and got.dtype == np.float32
    # serving answers the label model first and the same rule adds the reader: the same numbers
    np.testing.assert_array_equal(with_reader([cand], {0: stored[(0, 1)]}, both)[0], got)
    # the label model alone is left as it is
    model = replace(both, label_source="model")
    np.testing.assert_array_equal(with_reader([cand], {0: stored[(0, 1)]}, model)[0], stored[(0, 1)])
    with pytest.raises(ConfigError, match="label_source = 'both' need reader_reads >= 1"):
        replace(LEARNED, label_source="both")


def test_verdicts_use_the_emit_model_and_become_a_prediction() -> None:
    cands = [
        CandidateOutputs("10", 3.0, _scores(0.9, 0.5, 0.45, 0.1)),
        CandidateOutputs("20", 2.0, _scores(0.2, 0.1)),
    ]
    probs = {0: np.array([0.1, 0.8, 0.1], np.float32), 1: np.array([0.5, 0.1, 0.4], np.float32)}
    n = len(EMIT_FEATURES)
    # an emit model that reads only the best sentence score: evidence where it is high
    coef = tuple(8.0 if f == "rationale_1" else 0.0 for f in EMIT_FEATURES)
    emit = EmitModel((0.5,) * n, (1.0,) * n, coef, 0.0)
    chosen = picks(cands, probs, LEARNED, emit=emit)
    assert [v.candidate for v in chosen] == [0]  # sigmoid(8 * 0.4) > 0.5; sigmoid(8 * -0.3) < 0.5
    assert chosen[0].label is Label.CONTRADICT and chosen[0].sentences == (0, 1, 2)  # three listed
    same = picks(cands, probs, LEARNED, emit_probs=[float(chosen[0].confidence), 0.1])
    assert same == chosen  # probabilities given directly (out of fold) decide the same way
    pred = to_prediction(7, [c.doc_id for c in cands], chosen)
    assert pred.id == 7 and list(pred.evidence) == ["10"] and pred.evidence["10"].sentences == (0, 1, 2)


def test_a_reader_that_only_lists_changes_the_listing_and_nothing_else() -> None:
    # the reader believes sentence 3 and not sentence 1; emission, label and confidence stay the pipeline's
    # without it (its emit rows are the same, without the reader's columns)
    stance = np.full((4, 3), np.nan, np.float32)
    rationale = np.array([0.2, 0.0, np.nan, 0.95], np.float32)
    stance[[0, 1, 3]] = [0.3, 0.3, 0.4]
    cands = [
        CandidateOutputs("10", 3.0, _scores(0.9, 0.5, 0.2, 0.45), stance=stance, rationale=rationale),
        CandidateOutputs("20", 2.0, _scores(0.2, 0.1)),  # not read (the Verifier reads emitted ones only)
    ]
    probs = {0: np.array([0.1, 0.8, 0.1], np.float32), 1: np.array([0.5, 0.1, 0.4], np.float32)}
    coef = tuple(8.0 if f == "rationale_1" else 0.0 for f in EMIT_FEATURES)
    emit = EmitModel((0.5,) * len(EMIT_FEATURES), (1.0,) * len(EMIT_FEATURES), coef, 0.0)
    lists = replace(LEARNED, reader_reads=3, reader_weight=1.0, reader_lists_only=True)
    np.testing.assert_array_equal(emit_rows(cands, probs, lists), emit_rows(cands, probs, LEARNED))
    without = picks(cands, probs, LEARNED, emit=emit)
    chosen = picks(cands, probs, lists, emit=emit)
    assert [(v.candidate, v.label, v.confidence) for v in chosen] == [
        (v.candidate, v.label, v.confidence) for v in without
    ]
    assert without[0].sentences == (0, 1, 3) and chosen[0].sentences == (3,)  # the reader's 0.95 alone
    assert chosen[0].sentence_scores == (pytest.approx(0.95),)


def test_stored_outputs_join_by_claim_id_and_carry_a_readers_stance() -> None:
    claim = Claim(5, "c", {"10": (EvidenceSet((1,), Label.SUPPORT),)})
    candidates = [
        {
            "id": 5,
            "fold": 2,
            "candidates": [
                {
                    "doc_id": "10",
                    "retrieval": 1.5,
                    "scores": [0.2, 0.8, 0.6],
                    "stance": [[0.1, 0.1, 0.8], [0.7, 0.2, 0.1], [0.3, 0.3, 0.4]],
                },
                {"doc_id": "11", "retrieval": 1.0, "scores": [0.3]},
            ],
        }
    ]
    labels = [
        {
            "id": 5,
            "candidates": [
                {"top1": [0.5, 0.2, 0.3], "top2": [0.8, 0.1, 0.1]},
                {"top1": [0, 0, 1], "top2": None},
            ],
            "gold": {},
        }
    ]
    (out,) = load_outputs([claim], candidates, labels)
    assert out.fold == 2 and out.doc_ids == ["10", "11"]
    first, second = out.candidates
    assert set(first.label_reads) == {(1,), (1, 2)} and set(second.label_reads) == {(0,)}
    np.testing.assert_allclose(first.label_reads[(1, 2)], [0.8, 0.1, 0.1])
    assert first.stance is not None and first.stance.shape == (3, 3) and second.stance is None
