"""The two calibrated numbers in predictions: ``confidence`` = P(evidence) and ``p_label_correct`` =
P(label right | evidence); each gets its reliability table from the scorer. Also the strict reader's
and the validator's messages for duplicate sentences and a NOT_ENOUGH_INFO label."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sciverify.data.io import label_hint, parse_prediction, prediction_to_json, read_predictions
from sciverify.data.records import AbstractPrediction, Label, Prediction
from sciverify.scoring import evaluate_files
from sciverify.scoring.outputs import summary_text

GOLD_LINES = [
    {"id": 1, "evidence": {"10": [{"sentences": [0], "label": "SUPPORT"}]}},
    {"id": 2, "evidence": {"20": [{"sentences": [1], "label": "CONTRADICT"}]}},
    {"id": 3, "evidence": {"30": [{"sentences": [2], "label": "SUPPORT"}]}},
    {"id": 4, "evidence": {}},
]


def _files(tmp_path: Path, preds: list[dict[str, object]]) -> tuple[Path, Path]:
    gold = tmp_path / "gold.jsonl"
    gold.write_text("".join(json.dumps(g) + "\n" for g in GOLD_LINES))
    pred = tmp_path / "pred.jsonl"
    pred.write_text("".join(json.dumps(p) + "\n" for p in preds))
    return gold, pred


def test_p_label_correct_round_trips_through_the_prediction_file(tmp_path: Path) -> None:
    pred = Prediction(7, {"5": AbstractPrediction(Label.SUPPORT, (2, 0), 0.8123456, 0.654321)})
    row = prediction_to_json(pred)
    entry = {"label": "SUPPORT", "sentences": [2, 0], "confidence": 0.812346, "p_label_correct": 0.654321}
    assert row == {"id": 7, "evidence": {"5": entry}}
    assert parse_prediction(row).evidence["5"].p_label_correct == pytest.approx(0.654321)
    with pytest.raises(ValueError, match="p_label_correct must be a number"):
        bad = {"label": "SUPPORT", "sentences": [], "p_label_correct": "hi"}
        parse_prediction({"id": 7, "evidence": {"5": bad}})


def test_the_scorer_has_a_reliability_table_for_each_number(tmp_path: Path) -> None:
    gold, pred = _files(
        tmp_path,
        [
            {"id": 1, "evidence": {"10": {"label": "SUPPORT", "sentences": [0], "confidence": 0.85,
                                          "p_label_correct": 0.95}}},
            {"id": 2, "evidence": {"20": {"label": "SUPPORT", "sentences": [1], "confidence": 0.82,
                                          "p_label_correct": 0.55}}},  # evidence, wrong side
            {"id": 3, "evidence": {"30": {"label": "SUPPORT", "sentences": [2], "confidence": 0.35,
                                          "p_label_correct": 0.91}}},
            {"id": 4, "evidence": {"40": {"label": "SUPPORT", "sentences": [0], "confidence": 0.31,
                                          "p_label_correct": 0.99}}},  # not evidence: not in table 2
        ],
    )
    result = evaluate_files(gold, pred, n_boot=0)
    rk = result.ranking
    assert [(b.low, b.n, b.evidence_rate) for b in rk.reliability] == [(0.3, 2, 0.5), (0.8, 2, 1.0)]
    table = [(b.low, b.n, b.correct_rate) for b in rk.label_reliability]
    assert table == [(0.5, 1, 0.0), (0.9, 2, 1.0)]
    assert rk.label_ece == pytest.approx((1 * 0.55 + 2 * abs(0.93 - 1.0)) / 3)
    text = summary_text(result)
    assert "Reliability of P(evidence) ('confidence'" in text
    assert "Reliability of P(label right | evidence) ('p_label_correct'" in text
    assert rk.as_dict()["label_reliability"][1]["n"] == 2


def test_without_the_second_number_the_summary_says_why_and_where_it_is(tmp_path: Path) -> None:
    """The README's example file (a cross-validation run's oof_predictions.jsonl) carries no
    p_label_correct; the empty table says so and names the file that has it."""
    gold, pred = _files(tmp_path, [{"id": 1, "evidence": {"10": {"label": "SUPPORT", "sentences": [0],
                                                                 "confidence": 0.7}}}])
    result = evaluate_files(gold, pred, n_boot=0)
    text = summary_text(result)
    assert "P(label right | evidence): no table, because none of the 1 predicted abstract carries " \
           "'p_label_correct'" in text
    assert "oof_evidence.jsonl has both numbers" in text
    assert result.ranking.as_dict()["label_reason"] == result.ranking.label_reason


def test_numbers_only_on_abstracts_that_are_not_evidence_leave_the_table_empty_and_say_so(
    tmp_path: Path,
) -> None:
    gold, pred = _files(tmp_path, [
        {"id": 1, "evidence": {"10": {"label": "SUPPORT", "sentences": [0], "confidence": 0.7}}},
        {"id": 4, "evidence": {"40": {"label": "SUPPORT", "sentences": [0], "confidence": 0.6,
                                      "p_label_correct": 0.8}}},
    ])
    rk = evaluate_files(gold, pred, n_boot=0).ranking
    assert rk.label_reliability == ()
    assert rk.label_reason == ("1 predicted abstract carries 'p_label_correct', none of them a gold evidence "
                               "abstract (the table bins only gold evidence: the share labelled right)")


def test_the_second_table_needs_no_confidence(tmp_path: Path) -> None:
    """A file with p_label_correct but no confidence gets no average precision, and still its table."""
    gold, pred = _files(tmp_path, [
        {"id": 1, "evidence": {"10": {"label": "SUPPORT", "sentences": [0], "p_label_correct": 0.8}}},
    ])
    rk = evaluate_files(gold, pred, n_boot=0).ranking
    assert rk.average_precision is None and rk.reason is not None and "confidence" in rk.reason
    assert [(b.low, b.n, b.correct_rate) for b in rk.label_reliability] == [(0.8, 1, 1.0)]
    assert rk.label_reason is None


def test_the_strict_reader_refuses_duplicate_sentences(tmp_path: Path) -> None:
    from sciverify.errors import DataFormatError

    path = tmp_path / "p.jsonl"
    entry = {"label": "SUPPORT", "sentences": [3, 1, 3]}
    path.write_text('{"id": 1, "evidence": {}}\n' + json.dumps({"id": 2, "evidence": {"5": entry}}) + "\n")
    with pytest.raises(DataFormatError, match=r"p.jsonl:2: evidence\['5'\] lists sentence 3 more than once"):
        read_predictions(path)


def test_label_hints() -> None:
    assert "is not a prediction label" in label_hint("NOT_ENOUGH_INFO")
    assert "did you mean" not in label_hint("NOT_ENOUGH_INFO")
    assert "did you mean NOT_ENOUGH_INFO" in label_hint("NEI")  # a near miss still gets the hint
    assert "did you mean CONTRADICT" in label_hint("REFUTES")


def test_the_readme_example_file_says_why_its_second_table_is_empty(scifact) -> None:
    """The README scores a run's oof_predictions.jsonl: no p_label_correct there, and the reason names the
    run's oof_evidence.jsonl, which fills the table."""
    import re

    root = Path(__file__).parents[3]
    command = re.search(r"sciverify evaluate \S+ (results/\S+/oof_predictions\.jsonl)",
                        (root / "README.md").read_text(encoding="utf-8"))
    assert command is not None, "the README's evaluate example"
    example = root / command.group(1)
    rk = evaluate_files(scifact.train, example, n_boot=0).ranking
    assert rk.label_reliability == ()
    assert rk.label_reason is not None and "oof_evidence.jsonl has both numbers" in rk.label_reason
    named = evaluate_files(scifact.train, example.with_name("oof_evidence.jsonl"), n_boot=0).ranking
    assert sum(b.n for b in named.label_reliability) > 100 and named.label_reason is None
