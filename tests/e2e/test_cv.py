"""`sciverify train --cv`: the cross-fitted protocol end to end on a slice, resumed, and rescored."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sciverify.training.cv import OOF_PREDICTIONS, CvConfig, run_cv


def test_tiny_cross_fitted_run_scores_every_claim_out_of_fold_and_resumes(tmp_path: Path) -> None:
    out = tmp_path / "cv"
    config = CvConfig(out_dir=out, folds=2, tiny=True, label_base="minilm", seed=5)
    summary = run_cv(config, log=lambda _m: None)
    plan = json.loads((out / "folds.json").read_text())["fold_of"]
    assert set(plan.values()) == {0, 1}
    # every scored claim came from a fold whose models never saw it
    texts = [(out / f"fold-{f}" / "candidates.jsonl").read_text() for f in (0, 1)]
    rows = [json.loads(line) for text in texts for line in text.splitlines()]
    assert rows and all(plan[str(r["id"])] == r["fold"] for r in rows)
    assert summary["claims"] == len(rows) == 24
    for family in ("abstract_label_only", "abstract_rationalized", "sentence_selection", "sentence_label"):
        row = summary["tuned"][family]
        assert 0.0 <= row["f1_ci95"][0] <= row["f1"] <= row["f1_ci95"][1] <= 1.0
    assert [c["fold"] for c in summary["chosen_per_fold"]] == [0, 1]

    # the reported figures are the scorer's on the committed predictions
    from sciverify.data.datasets import resolve_data_dir
    from sciverify.data.io import read_claims, read_predictions
    from sciverify.scoring import score

    claims = {str(c.id): c for c in read_claims(resolve_data_dir(None).train)}
    preds = read_predictions(out / "minilm" / OOF_PREDICTIONS)
    report = score([claims[str(p.id)] for p in preds], preds)
    for family, row in summary["tuned"].items():
        assert report.aggregate[family].f1 == pytest.approx(row["f1"], abs=5e-5)

    # a second run skips every finished stage and changes nothing
    before = {p: p.read_bytes() for p in out.rglob("*.jsonl")}
    messages: list[str] = []
    run_cv(config, log=messages.append)
    assert sum("skipped" in m for m in messages) == 7  # 2 folds x 2 stages, decision, 2 final stages
    assert {p: p.read_bytes() for p in out.rglob("*.jsonl")} == before

    # the final directory has the layout of the shipped weights and verifies claims
    from sciverify.pipeline.verify import Verifier

    final = out / "models" / "final-minilm"
    # the label stages' resumable checkpoints (optimizer state included) are gone once a model is exported
    assert not [p.name for p in (out / "models").rglob("*stage*")]
    verifier = Verifier.load(model_dir=final)
    assert verifier.config.decision.confidence == "learned"
    # the decision ships in its own folder, as the shipped weights hold it, not beside the selector
    assert "[decision]" in (final / "decision" / "decision.toml").read_text()
    assert "[decision]" not in (final / "rationale" / "pipeline.toml").read_text()
    # the decision stage fitted the label calibrator and wrote the out-of-fold evidence view beside it
    assert (out / "minilm" / "label_calibration.json").exists()
    assert (out / "minilm" / "oof_evidence.jsonl").exists()
    assert verifier.label_calibrator is not None
    results = verifier.verify("ALDH1 expression is associated with poorer prognosis for breast cancer.")
    assert all(0.0 <= r.confidence <= 1.0 for r in results)


def test_direction_label_model_trains_on_corpus_direction_pairs_under_the_protocol(tmp_path: Path) -> None:
    out = tmp_path / "cv"
    config = CvConfig(out_dir=out, folds=2, tiny=True, label_base="mpnet6-direction", seed=5, final=False)
    summary = run_cv(config, log=lambda _m: None)
    assert summary["label_base"] == "mpnet6-direction" and summary["claims"] == 24
    for fold in (0, 1):
        report = json.loads((out / f"fold-{fold}" / "label-mpnet6-direction.train.json").read_text())
        assert report["aux_pairs"]["corpus_direction"] == 16
        rows = (out / f"fold-{fold}" / "labels-mpnet6-direction.jsonl").read_text().splitlines()
        assert rows
    assert (out / "mpnet6-direction" / OOF_PREDICTIONS).exists()


def test_the_entailment_stage_trains_alone_once_then_every_fold_starts_from_it(tmp_path: Path) -> None:
    from sciverify.training.cv import train_entailment_stage

    out = tmp_path / "cv"
    config = CvConfig(out_dir=out, folds=2, tiny=True, label_base="mpnet6-all", seed=5, final=False)
    record = train_entailment_stage(config, log=lambda _m: None)
    checkpoint = out / "models" / "aux-mpnet6-all.pt"
    assert record["checkpoint"] == str(checkpoint) and checkpoint.exists()
    assert record["aux_pairs"]["scinli"] == 8 and record["aux_pairs"]["mnli_mismatched"] == 8
    assert not checkpoint.with_name(checkpoint.name + ".stage").exists(), "the stage's state is gone"
    assert train_entailment_stage(config, log=lambda _m: None)["skipped"] is True
    made = checkpoint.stat().st_mtime_ns
    summary = run_cv(config, log=lambda _m: None)
    assert summary["label_base"] == "mpnet6-all" and checkpoint.stat().st_mtime_ns == made
    for fold in (0, 1):
        report = json.loads((out / f"fold-{fold}" / "label-mpnet6-all.train.json").read_text())
        assert report["aux_stage"] == {"checkpoint": str(checkpoint)}, "the fold loaded the shared stage"
    assert (out / "mpnet6-all" / OOF_PREDICTIONS).exists()


def test_a_label_model_without_a_shared_stage_cannot_train_it_alone(tmp_path: Path) -> None:
    from sciverify.errors import ConfigError
    from sciverify.training.cv import train_entailment_stage

    config = CvConfig(out_dir=tmp_path / "cv", folds=2, tiny=True, label_base="minilm")
    with pytest.raises(ConfigError, match="no shared entailment stage"):
        train_entailment_stage(config, log=lambda _m: None)
