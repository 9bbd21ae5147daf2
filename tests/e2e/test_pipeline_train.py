"""`sciverify train --tiny` end to end: trains every stage on a slice and yields a loadable model dir."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sciverify.training.run import TrainRunConfig, run_training


def test_tiny_training_run_produces_a_usable_model_dir(tmp_path: Path) -> None:
    out = tmp_path / "run"
    summary = run_training(TrainRunConfig(out_dir=out, tiny=True, seed=3), log=lambda _m: None)
    for name in (
        "label/config.json",
        "rationale/config.json",
        "rationale/weights.npz",
        "rationale/pipeline.toml",
        "rationale/manifest.json",
        "manifest.json",
    ):
        assert (out / name).exists(), name
    manifest = json.loads((out / "rationale" / "manifest.json").read_text())
    assert manifest["seed"] == 3 and len(manifest["data_sha256"]["claims_train.jsonl"]) == 64
    assert 0.0 <= summary["validation"]["abstract_rationalized"] <= 1.0
    # both emit decisions were tuned; the one shipped is the better of the two
    assert set(summary["validation_heuristic"]) == set(summary["validation_learned_out_of_fold"])
    decision = summary["tuned"]["decision"]
    assert (out / "rationale" / "emit.json").exists() == (decision["confidence"] == "learned")
    # the blend weight was measured end to end, with the gold-abstract choice among the weights tried
    rationale = summary["rationale"]
    tried = rationale["validation_objective_by_weight"]
    assert f"{rationale['scorer_weight_on_gold_abstracts']:.2f}" in tried
    assert f"{rationale['scorer_weight']:.2f}" in tried
    saved = json.loads((out / "rationale" / "config.json").read_text())
    assert saved["scorer_weight"] == rationale["scorer_weight"]
    # the reported figures are the scorer's on the written validation claims and predictions
    from sciverify.scoring import evaluate_files

    rescored = evaluate_files(out / "validation_claims.jsonl", out / "validation_predictions.jsonl", n_boot=0)
    assert not rescored.problems
    for family, f1 in summary["validation"].items():
        assert rescored.report.aggregate[family].f1 == pytest.approx(f1), family

    from sciverify.pipeline.verify import Verifier

    verifier = Verifier.load(model_dir=out)
    results = verifier.verify("ALDH1 expression is associated with poorer prognosis for breast cancer.")
    assert all(0.0 <= r.confidence <= 1.0 for r in results)


def test_training_refuses_a_non_empty_out_dir(tmp_path: Path) -> None:
    from sciverify.errors import ArtifactError

    (tmp_path / "keep.txt").write_text("x")
    with pytest.raises(ArtifactError, match="not empty"):
        run_training(TrainRunConfig(out_dir=tmp_path))
