"""Named label-model bodies: MiniLM from its package, all-mpnet-base-v2 checked by sha256 before use."""

from __future__ import annotations

from pathlib import Path

import pytest

from sciverify.errors import ArtifactError, ConfigError
from sciverify.training.bases import base_dir, ensure_mpnet


def test_minilm_comes_from_its_package_and_unknown_names_are_refused() -> None:
    assert (base_dir("minilm") / "config.json").is_file()
    with pytest.raises(ConfigError, match="unknown label model base 'roberta'"):
        base_dir("roberta")


def test_an_mpnet_copy_with_other_weights_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("config.json", "tokenizer.json", "model.safetensors"):
        (tmp_path / name).write_text("{}")
    monkeypatch.setenv("SCIVERIFY_MPNET_DIR", str(tmp_path))
    with pytest.raises(ArtifactError, match="is not all-mpnet-base-v2's"):
        ensure_mpnet()
    (tmp_path / "model.safetensors").unlink()
    with pytest.raises(ArtifactError, match="file missing"):
        ensure_mpnet()
