"""The final stage of a run with the reader reuses the final label model of the same run without it."""

from __future__ import annotations

from pathlib import Path

from sciverify.training.cv.run import copy_twin_label


def _twin(out: Path) -> None:
    label = out / "models" / "final-mpnet6" / "label"
    label.mkdir(parents=True)
    (label / "model.onnx").write_bytes(b"graph")
    (label / "tokenizer.json").write_text("{}")
    (out / "mpnet6").mkdir()
    (out / "mpnet6" / "final-label.train.json").write_text('{"accuracy": 0.7}')


def test_the_twin_label_model_is_copied_with_its_training_report(tmp_path: Path) -> None:
    _twin(tmp_path)
    bdir = tmp_path / "mpnet6+reader-mpnet6"
    bdir.mkdir()
    assert copy_twin_label(tmp_path, "mpnet6", bdir)
    dest = tmp_path / "models" / "final-mpnet6+reader-mpnet6" / "label"
    assert (dest / "model.onnx").read_bytes() == b"graph" and (dest / "tokenizer.json").exists()
    assert (bdir / "final-label.train.json").read_text() == '{"accuracy": 0.7}'


def test_without_a_twin_or_for_the_twin_itself_nothing_is_copied(tmp_path: Path) -> None:
    bdir = tmp_path / "mpnet6+reader-mpnet6"
    bdir.mkdir()
    assert not copy_twin_label(tmp_path, "mpnet6", bdir)
    assert not (tmp_path / "models" / "final-mpnet6+reader-mpnet6").exists()
    _twin(tmp_path)
    assert not copy_twin_label(tmp_path, "mpnet6", tmp_path / "mpnet6")
