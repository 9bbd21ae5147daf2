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
