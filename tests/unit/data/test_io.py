from __future__ import annotations

from pathlib import Path

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


# ---- writing outputs: whole or not at all, never over an input -----------------------------------


def test_atomic_writer_creates_missing_directories_and_removes_them_on_failure(tmp_path: Path) -> None:
    from sciverify.data.io import atomic_writer

    target = tmp_path / "a" / "b" / "out.jsonl"
    with pytest.raises(KeyboardInterrupt), atomic_writer(target) as handle:
        handle.write(b"half a file")
        raise KeyboardInterrupt
    assert not (tmp_path / "a").exists(), "no temporary file and no directory made for it are left"
    with atomic_writer(target) as handle:
        handle.write(b"whole\n")
    assert target.read_bytes() == b"whole\n" and [p.name for p in target.parent.iterdir()] == ["out.jsonl"]
    with pytest.raises(RuntimeError), atomic_writer(target) as handle:
        handle.write(b"replacement, half written")
        raise RuntimeError("record 900,000 is broken")
    assert target.read_bytes() == b"whole\n", "a failed rewrite keeps the old file"


def test_atomic_writer_turns_an_unwritable_place_into_one_error(tmp_path: Path) -> None:
    from sciverify.data.io import atomic_writer

    blocker = tmp_path / "file"
    blocker.write_text("x")
    for target in (Path("/proc/sciverify-test/out.jsonl"), blocker / "out.jsonl"):
        with pytest.raises(DataFormatError, match="cannot write here"), atomic_writer(target):
            pass


def test_check_output_file_refuses_inputs_and_unwritable_places(tmp_path: Path) -> None:
    from sciverify.data.output_checks import check_output_dir, check_output_file

    claims = tmp_path / "claims.jsonl"
    claims.write_text("{}\n")
    with pytest.raises(DataFormatError, match="is also an input"):
        check_output_file(tmp_path / "." / "claims.jsonl", inputs=[None, claims])
    with pytest.raises(DataFormatError, match=r"cannot write in /sys"):
        check_output_file("/sys/out.jsonl")
    with pytest.raises(DataFormatError, match="is not a directory"):
        check_output_file(claims / "out.jsonl")
    assert check_output_file(tmp_path / "new" / "dir" / "p.jsonl") == tmp_path / "new" / "dir" / "p.jsonl"
    assert not (tmp_path / "new").exists(), "checking creates nothing"
    assert check_output_dir(tmp_path / "out" / "cv") == tmp_path / "out" / "cv"
    with pytest.raises(DataFormatError, match="must be a directory"):
        check_output_dir(claims)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["claims.jsonl"], "no probe file is left"


def test_a_malformed_json_line_is_placed_by_its_column_only(tmp_path: Path) -> None:
    from sciverify.data.io import read_jsonl

    path = tmp_path / "x.jsonl"
    path.write_text('{"a": 1}\n\n{"a": \n')
    with pytest.raises(DataFormatError) as caught:
        read_jsonl(path)
    assert str(caught.value) == (
        f"{path}:3: invalid JSON (unexpected end of data: the line ends before the JSON value does)"
    )
    path.write_text('{"a": x}\n')
    with pytest.raises(DataFormatError, match=r":1: invalid JSON \(unexpected character.* at column 7\)$"):
        read_jsonl(path)
