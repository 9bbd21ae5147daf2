"""The PubMedQA cross-domain check: held-out yes/no questions as claims against every abstract."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sciverify.data.records import Label
from sciverify.data.sources.pubmedqa import (
    is_held_out,
    question_to_claim,
    question_to_statement,
    read_pubmedqa_check,
)
from sciverify.errors import DataFormatError
from sciverify.training.aux_pairs import load_pubmedqa


def _item(question: str, decision: str) -> dict[str, object]:
    return {
        "QUESTION": question,
        "CONTEXTS": ["We studied 40 patients. Outcomes were measured at one year."],
        "LONG_ANSWER": "Statins reduced the risk. The effect was large.",
        "final_decision": decision,
    }


def _ids(n: int, held: bool) -> list[str]:
    return [str(i) for i in range(1000, 5000) if is_held_out(str(i)) is held][:n]


def test_held_out_share_is_about_thirty_percent() -> None:
    share = sum(is_held_out(str(i)) for i in range(20000)) / 20000
    assert 0.28 < share < 0.32
    assert is_held_out("12345") is is_held_out("12345")


def test_question_to_claim() -> None:
    assert question_to_claim("Do statins reduce risk?") == "Statins reduce risk."
    assert question_to_claim("What is X?") == "What is X?"


def test_check_reads_held_out_statements_only(tmp_path: Path) -> None:
    held, kept = _ids(3, True), _ids(1, False)
    data = {
        held[0]: _item("Do statins reduce risk?", "yes"),
        held[1]: _item("Does aspirin cause harm?", "no"),
        held[2]: _item("What is the dose?", "yes"),  # no statement: left out
        kept[0]: _item("Do trained items count?", "yes"),  # training side: corpus only
    }
    path = tmp_path / "ori_pqal.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    claims, corpus = read_pubmedqa_check(path)
    assert len(corpus) == 4
    assert [c.id for c in claims] == sorted(int(held[0:2][i]) for i in range(2))
    by_id = {c.id: c for c in claims}
    first = by_id[int(held[0])]
    assert first.text == "Statins reduce risk."
    (es,) = first.evidence[held[0]]
    doc = next(d for d in corpus if d.doc_id == int(held[0]))
    assert es.label is Label.SUPPORT and [doc.sentences[i] for i in es.sentences] == [
        "Statins reduced the risk.",
        "The effect was large.",
    ]
    assert by_id[int(held[1])].evidence[held[1]][0].label is Label.CONTRADICT
    # the training loader skips exactly the held-out ids
    train = load_pubmedqa(path, skip_held_out=True)
    assert [p.claim for p in train] == ["Trained items count."]
    assert len(load_pubmedqa(path)) == 4


def test_damaged_file_is_a_data_error(tmp_path: Path) -> None:
    path = tmp_path / "ori_pqal.json"
    path.write_text("{not json", encoding="utf-8")
    with pytest.raises(DataFormatError, match="invalid JSON"):
        read_pubmedqa_check(path)


@pytest.mark.parametrize(
    ("question", "statement"),
    [
        ("Do statins reduce risk?", "Statins reduce risk."),
        (
            "Is specialty care associated with improved survival?",
            "Specialty care is associated with improved survival.",
        ),
        ("Is obesity a risk factor for wheezing?", "Obesity is a risk factor for wheezing."),
        ("Are performance measurement systems useful?", "Performance measurement systems are useful."),
        (
            "Can static foot posture measurements predict plantar area?",
            "Static foot posture measurements can predict plantar area.",
        ),
        ("Should circumcision be performed in childhood?", "Circumcision should be performed in childhood."),
        (
            "Is there a relationship between homocysteine and vitiligo?",
            "There is a relationship between homocysteine and vitiligo.",
        ),
        ("Is breast cancer survival improving?", "Breast cancer survival is improving."),
        (
            "Is diffusion-weighted imaging a significant indicator?",
            "Diffusion-weighted imaging is a significant indicator.",
        ),
        # the subject holds a verb of its own: the rule cannot tell where it ends, so it stays a question
        (
            "Are women who are treated for hypothyroidism at risk?",
            "Are women who are treated for hypothyroidism at risk?",
        ),
        ("What is the dose?", "What is the dose?"),
    ],
)
def test_question_to_statement(question: str, statement: str) -> None:
    assert question_to_statement(question) == statement


def test_the_check_holds_questions_of_every_auxiliary(tmp_path: Path) -> None:
    held = _ids(3, True)
    data = {
        held[0]: _item("Is aspirin associated with harm?", "no"),
        held[1]: _item("Can statins reduce risk?", "yes"),
        held[2]: _item("Is it?", "yes"),  # nothing to place: left out
    }
    path = tmp_path / "ori_pqal.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    claims, _ = read_pubmedqa_check(path)
    assert sorted(c.text for c in claims) == ["Aspirin is associated with harm.", "Statins can reduce risk."]
