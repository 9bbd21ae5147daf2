from __future__ import annotations

import pytest

from sciverify.data.io import read_claims, read_corpus, read_predictions, write_predictions
from sciverify.data.records import AbstractPrediction, Label, Prediction
from sciverify.errors import DataFormatError


def test_real_corpus_and_claims_load(scifact):
    corpus = read_corpus(scifact.corpus)
    claims = read_claims(scifact.train)
    assert len(corpus) == 5183
    assert len(claims) == 809
    assert isinstance(corpus[0].doc_id, int)
    by_id = {c.id: c for c in claims}
    assert by_id[2].evidence["13734012"][0].label is Label.CONTRADICT


def test_string_doc_ids_are_kept(write_jsonl):
    path = write_jsonl("c.jsonl", ['{"doc_id": "ug7v899j", "title": "T", "abstract": ["A.", "B."]}'])
    (doc,) = read_corpus(path)
    assert doc.doc_id == "ug7v899j"
    assert doc.sentences == ("A.", "B.")


@pytest.mark.parametrize(
    ("lines", "needle", "line"),
    [
        (['{"doc_id": 1, "abstract": ["x"]}', "{not json"], "invalid JSON", 2),
        (['{"doc_id": 1, "abstract": []}'], "no sentences", 1),
        (['{"doc_id": 1, "abstract": ["x"]}', '{"doc_id": 1, "abstract": ["y"]}'], "duplicate doc_id", 2),
        (['{"abstract": ["x"]}'], "missing field 'doc_id'", 1),
    ],
)
def test_corpus_errors_name_file_and_line(write_jsonl, lines, needle, line):
    path = write_jsonl("bad.jsonl", lines)
    with pytest.raises(DataFormatError) as info:
        read_corpus(path)
    assert needle in str(info.value)
    assert info.value.line == line
    assert str(path) in str(info.value)


def test_empty_file_is_an_error(write_jsonl):
    with pytest.raises(DataFormatError, match="empty"):
        read_corpus(write_jsonl("empty.jsonl", []))


def test_prediction_label_hints(write_jsonl):
    path = write_jsonl("p.jsonl", ['{"id": 1, "evidence": {"5": {"label": "REFUTES", "sentences": [0]}}}'])
    with pytest.raises(DataFormatError, match="did you mean CONTRADICT"):
        read_predictions(path)
    path = write_jsonl("p2.jsonl", ['{"id": 1, "evidence": {"5": {"label": "support", "sentences": [0]}}}'])
    with pytest.raises(DataFormatError, match="upper case"):
        read_predictions(path)


def test_prediction_round_trip(tmp_path):
    preds = [
        Prediction(id=3, evidence={"11": AbstractPrediction(Label.SUPPORT, (1, 11), 0.9)}),
        Prediction(id="cord-7", evidence={}),
    ]
    path = tmp_path / "out.jsonl"
    write_predictions(path, preds)
    assert read_predictions(path) == preds
