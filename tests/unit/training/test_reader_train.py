"""The reader's training entry points refuse a device this machine lacks before reading any data."""

from __future__ import annotations

from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from sciverify.errors import ConfigError  # noqa: E402
from sciverify.training.reader_train import ReaderTrainConfig, ensure_reader_aux, train_reader  # noqa: E402


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has a CUDA GPU")
def test_cuda_without_a_gpu_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    config = ReaderTrainConfig.tiny()
    with pytest.raises(ConfigError, match="no CUDA GPU"):
        train_reader(config, [], [], tmp_path / "out", tmp_path / "work", device="cuda")
    with pytest.raises(ConfigError, match="no CUDA GPU"):
        ensure_reader_aux(config, [], tmp_path / "work", device="cuda")
    assert list(tmp_path.iterdir()) == []


def test_a_reader_started_from_a_label_stage_refuses_a_missing_or_foreign_file(tmp_path: Path) -> None:
    """(R) starts from the label model's finished entailment stage: a missing file is named with the
    command that trains it, and a file made with other settings is refused, both in one line and before
    anything is trained."""
    from sciverify.training.cv.plan import all_reader_recipe

    checkpoint = tmp_path / "aux-mpnet6-all.pt"
    config = all_reader_recipe(13, True, checkpoint)
    assert config.start_checkpoint == str(checkpoint) and config.start_stamp
    with pytest.raises(ConfigError, match="--entailment-only"):
        ensure_reader_aux(config, [], tmp_path / "work")
    torch.save({"stamp": "another stage", "state": {}}, checkpoint)
    with pytest.raises(ConfigError, match="other entailment-stage settings"):
        ensure_reader_aux(config, [], tmp_path / "work")
    torch.save({"stamp": config.start_stamp, "state": {}}, checkpoint)
    assert ensure_reader_aux(config, [], tmp_path / "work") == checkpoint
    assert not (tmp_path / "work").exists()
    with pytest.raises(ConfigError, match="needs the stamp"):
        ReaderTrainConfig(start_checkpoint=str(checkpoint))
