"""``sciverify train``'s arguments reach the training functions as given: the CLI only parses them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import sciverify.training.cv as cv
from sciverify.cli import app


@pytest.mark.parametrize(("args", "device"), [([], "auto"), (["--device", "cpu"], "cpu")])
def test_the_device_option_is_passed_through_as_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str], device: str
) -> None:
    """Default ``auto``; resolving it (and refusing ``cuda`` without a GPU) is the library's part."""
    seen: dict[str, Any] = {}

    def entailment_stage(config: cv.CvConfig, log: Any = None, *, device: str = "cpu") -> dict[str, Any]:
        seen.update(config=config, device=device)
        return {"checkpoint": "aux.pt"}

    monkeypatch.setattr(cv, "train_entailment_stage", entailment_stage)
    out = tmp_path / "run"
    result = CliRunner().invoke(app, ["train", "--tiny", "--out", str(out), "--entailment-only", *args])
    assert result.exit_code == 0, result.output
    assert seen["device"] == device and seen["config"].out_dir == out
    assert "entailment stage done: aux.pt" in result.output
