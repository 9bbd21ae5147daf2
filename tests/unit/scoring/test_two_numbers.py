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


def test_without_the_second_number_the_summary_says_so(tmp_path: Path) -> None:
    gold, pred = _files(tmp_path, [{"id": 1, "evidence": {"10": {"label": "SUPPORT", "sentences": [0],
                                                                 "confidence": 0.7}}}])
    text = summary_text(evaluate_files(gold, pred, n_boot=0))
    assert "no predicted gold evidence abstract carries 'p_label_correct'" in text


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
