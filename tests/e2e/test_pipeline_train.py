"""`sciverify train --tiny` end to end: trains every stage on a slice and yields a loadable model dir."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from sciverify.training.run import TrainRunConfig, run_training


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    out = tmp_path_factory.mktemp("train") / "run"
    return out, run_training(TrainRunConfig(out_dir=out, tiny=True, seed=3), log=lambda _m: None)


def test_tiny_training_run_produces_a_usable_model_dir(tiny_run: tuple[Path, dict]) -> None:
    out, summary = tiny_run
    for name in (
        "label/config.json",
        "rationale/config.json",
        "rationale/weights.npz",
        "rationale/pipeline.toml",
        "rationale/manifest.json",
        "rationale/scorer/model.onnx",
        "manifest.json",
        "aux-stage.pt",  # the label model's aux stage, the scorer's starting body
    ):
        assert (out / name).exists(), name
    manifest = json.loads((out / "rationale" / "manifest.json").read_text())
    assert manifest["seed"] == 3 and len(manifest["data_sha256"]["claims_train.jsonl"]) == 64
    assert 0.0 <= summary["validation"]["abstract_rationalized"] <= 1.0
    # both emit decisions were tuned; the one shipped is the better of the two
    assert set(summary["validation_heuristic"]) == set(summary["validation_learned_out_of_fold"])
    decision = summary["tuned"]["decision"]
    assert (out / "rationale" / "emit.json").exists() == (decision["confidence"] == "learned")

    from sciverify.pipeline.verify import Verifier

    verifier = Verifier.load(model_dir=out)
    results = verifier.verify("ALDH1 expression is associated with poorer prognosis for breast cancer.")
    assert all(0.0 <= r.confidence <= 1.0 for r in results)


def test_training_refuses_a_non_empty_out_dir(tmp_path: Path) -> None:
    from sciverify.errors import ArtifactError

    (tmp_path / "keep.txt").write_text("x")
    with pytest.raises(ArtifactError, match="not empty"):
        run_training(TrainRunConfig(out_dir=tmp_path))


def test_skip_label_reuses_the_aux_checkpoint_and_refuses_a_foreign_one(
    tiny_run: tuple[Path, dict], tmp_path: Path
) -> None:
    from sciverify.errors import ConfigError

    checkpoint = tiny_run[0] / "aux-stage.pt"
    before = checkpoint.read_bytes()
    out = tmp_path / "again"
    config = TrainRunConfig(out_dir=out, tiny=True, seed=3, train_label=False, aux_checkpoint=checkpoint)
    summary = run_training(config, log=lambda _m: None)
    assert summary["aux_stage"] == {"checkpoint": str(checkpoint)}  # loaded, not retrained
    assert checkpoint.read_bytes() == before and not (out / "aux-stage.pt").exists()
    assert not (out / "aux-stage-export").exists()
    assert (out / "rationale" / "scorer" / "model.onnx").exists()
    # another seed means another aux stage: the checkpoint is refused, not silently reused
    with pytest.raises(ConfigError, match="other aux-stage settings"):
        run_training(replace(config, out_dir=tmp_path / "foreign", seed=4), log=lambda _m: None)
