"""The final stage of a run reuses the final label model of a finished run with the same label body."""

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


def test_a_run_with_a_reader_gives_its_label_model_to_another_reader_or_role(tmp_path: Path) -> None:
    """The shipped run has a reader that only lists; a run with another grid over the same label body
    reuses its final label model and report, not the unfinished one of a sibling without a graph."""
    listing = tmp_path / "models" / "final-mpnet6-all+reader-mpnet6-list" / "label"
    listing.mkdir(parents=True)
    (listing / "model.onnx").write_bytes(b"listing graph")
    (tmp_path / "models" / "final-mpnet6-all+reader-mpnet6" / "label").mkdir(parents=True)  # unfinished
    (tmp_path / "mpnet6-all+reader-mpnet6-list").mkdir()
    (tmp_path / "mpnet6-all+reader-mpnet6-list" / "final-label.train.json").write_text('{"steps": 180}')
    bdir = tmp_path / "mpnet6-all+reader-mpnet6-every"
    bdir.mkdir()
    assert copy_twin_label(tmp_path, "mpnet6-all", bdir)
    dest = tmp_path / "models" / "final-mpnet6-all+reader-mpnet6-every" / "label"
    assert (dest / "model.onnx").read_bytes() == b"listing graph"
    assert (bdir / "final-label.train.json").read_text() == '{"steps": 180}'
