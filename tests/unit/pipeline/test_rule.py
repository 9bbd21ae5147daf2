"""The emit decision on hand-made scores and label probabilities."""

from __future__ import annotations

import numpy as np
import pytest

from sciverify.data.records import Label
from sciverify.decision.rule import confidence_of, decide, label_inputs
from sciverify.decision.sentence_rule import listed_sentences, select_sentences
from sciverify.decision.settings import DecisionConfig
from sciverify.errors import ConfigError

SCORES = [
    np.array([0.1, 0.9, 0.6, 0.55], np.float32),  # candidate 0: rationale 1, 2, 3
    np.array([0.3, 0.2], np.float32),  # candidate 1: nothing above 0.5
    np.array([0.7, 0.1, 0.8], np.float32),  # candidate 2: rationale 2, 0
]


def test_select_sentences_most_confident_first_and_capped() -> None:
    cfg = DecisionConfig(sentence_threshold=0.5, max_sentences=2)
    assert select_sentences(SCORES[0], cfg) == [1, 2]
    assert select_sentences(SCORES[1], cfg) == []
    assert select_sentences(SCORES[2], cfg) == [2, 0]
    assert select_sentences(np.zeros(0), cfg) == []


def test_label_inputs_keeps_best_candidates_with_a_rationale() -> None:
    assert label_inputs(SCORES, DecisionConfig()) == [0, 2]
    assert label_inputs(SCORES, DecisionConfig(max_labelled=1)) == [0]  # 0.9 beats 0.8
    assert label_inputs(SCORES, DecisionConfig(min_rationale_score=0.85)) == [0]


def test_confidence_formula() -> None:
    cfg = DecisionConfig(rationale_power=1.0, rank_discount=0.5)
    label, conf = confidence_of(np.array([0.1, 0.7, 0.2]), 0.5, 2, cfg)
    assert label is Label.CONTRADICT
    assert conf == pytest.approx(0.8 * 0.5 / 2.0)


def test_decide_emits_confident_verdicts_in_order() -> None:
    cfg = DecisionConfig(sentence_threshold=0.5, max_sentences=3, emit_threshold=0.5, rationale_power=0.0)
    probs = {0: np.array([0.8, 0.1, 0.1]), 2: np.array([0.2, 0.25, 0.55])}
    verdicts = decide(SCORES, probs, cfg)
    assert [(v.candidate, v.label, v.sentences) for v in verdicts] == [(0, Label.SUPPORT, (1, 2, 3))]
    assert verdicts[0].confidence == pytest.approx(0.9)
    # lower the bar: candidate 2 (1 - P(NEI) = 0.45) is emitted too, after candidate 0
    verdicts = decide(SCORES, probs, DecisionConfig(emit_threshold=0.4, rationale_power=0.0))
    assert [v.candidate for v in verdicts] == [0, 2]
    assert verdicts[1].label is Label.CONTRADICT
    assert (
        decide(SCORES, probs, DecisionConfig(emit_threshold=0.4, rationale_power=0.0, max_emitted=1))[
            0
        ].candidate
        == 0
    )


def test_config_validation_and_json_round_trip() -> None:
    cfg = DecisionConfig(sentence_threshold=0.4, max_sentences=2)
    assert DecisionConfig.from_json(cfg.to_json()) == cfg
    with pytest.raises(ConfigError, match="sentence_threshold"):
        DecisionConfig(sentence_threshold=1.5)
    with pytest.raises(ConfigError, match="unknown decision settings: bogus"):
        DecisionConfig.from_json({"bogus": 1})


def test_learned_mode_labels_every_candidate_and_falls_back_to_the_best_sentence() -> None:
    cfg = DecisionConfig(sentence_threshold=0.5, confidence="learned", max_labelled=3)
    assert label_inputs(SCORES, cfg) == [0, 1, 2]
    assert select_sentences(SCORES[1], cfg) == [0]  # nothing clears 0.5: its best sentence stands in
    assert label_inputs(SCORES, DecisionConfig(confidence="learned", max_labelled=2)) == [0, 1]


def test_learned_mode_takes_confidence_from_the_emit_model() -> None:
    cfg = DecisionConfig(sentence_threshold=0.5, confidence="learned", emit_threshold=0.5, max_emitted=5)
    probs = {i: np.array([0.6, 0.3, 0.1]) for i in range(3)}
    verdicts = decide(SCORES, probs, cfg, emit_probs=[0.2, 0.9, 0.55])
    assert [(v.candidate, v.confidence) for v in verdicts] == [(1, 0.9), (2, 0.55)]
    assert verdicts[0].sentences == (0,)
    with pytest.raises(ConfigError, match="emit model"):
        decide(SCORES, probs, cfg)


def test_a_verdict_may_list_more_sentences_than_the_label_model_reads() -> None:
    cfg = DecisionConfig(sentence_threshold=0.5, max_sentences=2, max_listed=3, emit_threshold=0.5,
                         rationale_power=0.0)
    assert select_sentences(SCORES[0], cfg) == [1, 2]  # what the label model reads
    assert listed_sentences(SCORES[0], cfg) == [1, 2, 3]  # the next one above 0.5 is listed too
    assert listed_sentences(SCORES[2], cfg) == [2, 0]  # nothing else clears the threshold
    assert listed_sentences(SCORES[0], DecisionConfig(sentence_threshold=0.5, max_sentences=2)) == [1, 2]
    (verdict,) = decide(SCORES, {0: np.array([0.8, 0.1, 0.1])}, cfg)
    assert verdict.sentences == (1, 2, 3) and verdict.sentence_scores == pytest.approx((0.9, 0.6, 0.55))
    with pytest.raises(ConfigError, match="max_listed must be 0 or at least max_sentences"):
        DecisionConfig(max_sentences=3, max_listed=2)


def test_unknown_confidence_mode_is_refused() -> None:
    with pytest.raises(ConfigError, match="confidence"):
        DecisionConfig(confidence="vibes")


def test_a_reader_that_only_lists_leaves_the_emission_as_without_it() -> None:
    lists = DecisionConfig(reader_reads=3, reader_weight=0.5, reader_lists_only=True, max_emitted=2)
    before = lists.emission()
    assert lists.uses_reader and not before.uses_reader and before.reader_weight == 0.0
    assert before == DecisionConfig(max_emitted=2)  # everything else kept
    full = DecisionConfig(reader_reads=3, reader_weight=0.5)
    assert full.emission() is full
    assert DecisionConfig.from_json(lists.to_json()) == lists
    with pytest.raises(ConfigError, match="reader_lists_only needs label_source = 'model'"):
        DecisionConfig(reader_reads=3, reader_weight=0.5, label_source="reader", reader_lists_only=True)
    with pytest.raises(ConfigError, match="reader_weight > 0"):
        DecisionConfig(reader_reads=3, reader_weight=0.0, reader_lists_only=True)


def test_the_protocols_settings_complete_the_learned_decision_each_read_as_its_fields_type() -> None:
    from sciverify.decision.settings import learned_decision

    settings = {"sentence_threshold": 0, "emit_threshold": 1, "max_emitted": 2.0, "reader_reads": 3,
                "reader_weight": 1, "reader_lists_only": 1}
    cfg = learned_decision(settings, 5)
    assert cfg == DecisionConfig(
        sentence_threshold=0.0, max_sentences=2, max_listed=3, min_rationale_score=0.0, max_labelled=5,
        emit_threshold=1.0, rationale_power=0.0, max_emitted=2, confidence="learned", reader_reads=3,
        reader_weight=1.0, reader_lists_only=True,
    )
    # pipeline.toml writes what it is given: 0.0 stays a float, 2 an int
    assert type(cfg.sentence_threshold) is float and type(cfg.max_emitted) is int
    assert cfg.reader_lists_only is True
    with pytest.raises(ConfigError, match="unknown decision settings: threshold"):
        learned_decision({"threshold": 0.3}, 5)


def test_a_reader_that_only_lists_reads_the_abstracts_emitted_or_shown_and_no_other() -> None:
    from dataclasses import replace

    from sciverify.decision.candidates import CandidateOutputs
    from sciverify.decision.rule import decide_claim, listing_reads
    from sciverify.decision.settings import LEARNED

    cands = [CandidateOutputs(str(i), 1.0, np.array([0.9, 0.1, 0.6], np.float32)) for i in range(3)]
    probs = {i: np.array([0.6, 0.3, 0.1], np.float32) for i in range(3)}
    cfg = replace(LEARNED, max_labelled=3, emit_threshold=0.5, max_emitted=1, reader_reads=2,
                  reader_weight=1.0, reader_lists_only=True)

    def read(outputs, only):  # the reader believes the third sentence of whatever it reads
        rationale = np.array([0.1, np.nan, 0.9], np.float32)
        stance = np.full((3, 3), 1 / 3, np.float32)
        return [
            replace(o, stance=stance, rationale=rationale) if i in only else o for i, o in enumerate(outputs)
        ]

    wanted = listing_reads(cands, probs, cfg, [0.9, 0.4, 0.1], shown=0.3)
    assert wanted == [0, 1]
    decided = decide_claim(read(cands, wanted), probs, cfg, [0.9, 0.4, 0.1], shown=0.3)
    assert [v.candidate for v in decided.emitted] == [0] and decided.emitted[0].sentences == (2,)
    assert [(v.candidate, v.sentences) for v in decided.shown] == [(1, (2,))]
    assert listing_reads(cands, probs, cfg, [0.9, 0.4, 0.1]) == [0]  # the leaderboard alone: the emitted
    assert listing_reads(cands, probs, cfg, [0.2, 0.1, 0.1]) == []  # nothing emitted: nothing read
    assert listing_reads(cands, probs, cfg.emission(), [0.9, 0.4, 0.1], shown=0.3) == []  # no such reader
