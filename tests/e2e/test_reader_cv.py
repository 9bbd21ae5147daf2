"""The reader under the protocol, CI-sized: `train --cv 2 --tiny --reader minilm` end to end, and the serving
path with the reader giving the same predictions as the decision layer's stored outputs."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch")

from sciverify.data.io import read_claims, read_corpus, read_jsonl  # noqa: E402
from sciverify.data.records import doc_key  # noqa: E402
from sciverify.decision.settings import learned_decision  # noqa: E402
from sciverify.training.cv import CvConfig, read_run_outputs, run_cv  # noqa: E402
from sciverify.training.cv.decision import choose_decision  # noqa: E402
from sciverify.training.cv.outputs import fold_rows  # noqa: E402
from sciverify.training.cv.reader import attach_reader, read_reader_rows, reader_milestones  # noqa: E402

SETTINGS = {
    "sentence_threshold": 0.3,
    "emit_threshold": 0.2,
    "max_emitted": 2,
    "reader_reads": 3,
    "reader_weight": 0.5,
    "label_source": "reader",
}


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("cv") / "run"
    config = CvConfig(out_dir=out, folds=2, tiny=True, label_base="minilm", seed=5, reader="minilm")
    run_cv(config, log=lambda _m: None)
    return out


def test_reader_folds_are_read_out_of_fold_and_decided(run: Path, scifact) -> None:
    claims = read_claims(scifact.train)
    docs = {doc_key(a.doc_id): a for a in read_corpus(scifact.corpus)}
    plan = json.loads((run / "folds.json").read_text())["fold_of"]
    for f in (0, 1):
        report = json.loads((run / "models" / f"fold-{f}" / "reader-minilm" / "training.json").read_text())
        assert report["int8_check"]["pairs"] > 0
        assert report["int8_check"]["stance_argmax_agreement"] >= 0.9
        rows = read_jsonl(run / f"fold-{f}" / "reader-minilm.jsonl")
        assert rows and all(plan[str(r["id"])] == f for r in rows)
    rows = read_reader_rows(run, claims, "minilm")
    assert len(rows) == 24
    for r in rows:
        for key in r.candidate_order:
            out = r.candidates[key]
            assert out.shape == (len(docs[key].sentences), 4)
            assert np.allclose(out[:, :3].sum(1), 1.0, atol=1e-3)
        assert all(r.outputs(key) is not None for key in r.claim.evidence)
    m = reader_milestones(rows)
    assert m["gold_evidence_abstracts"] >= 1 and 0.0 <= m["top1_gold_reader"] <= 1.0

    summary = json.loads((run / "minilm+reader-minilm" / "summary.json").read_text())
    assert summary["reader"] == "minilm" and summary["claims"] == 24
    assert summary["reader_milestones"] == m
    # the final models verify claims with whatever decision the folds chose
    from sciverify.pipeline.verify import Verifier

    final = run / "models" / "final-minilm+reader-minilm"
    verifier = Verifier.load(model_dir=final)
    assert (final / "reader").is_dir() == verifier.config.decision.uses_reader
    if verifier.config.decision.uses_reader:
        # the final reader holds no claim out, so its int8 graph is checked on its training claims' pairs
        report = json.loads((final / "reader" / "training.json").read_text())
        assert report["int8_check"]["pairs"] > 0
    # P(label right | evidence) is fitted on what the chosen decision reads (the reader's stance or the
    # label model's probabilities) and ships beside the emit model
    calibration = json.loads((run / "minilm+reader-minilm" / "label_calibration.json").read_text())
    assert calibration["fitted_on"]["label_source"] == verifier.config.decision.label_source
    assert verifier.label_calibrator is not None
    results = verifier.verify("ALDH1 expression is associated with poorer prognosis for breast cancer.")
    assert all(0.0 <= r.confidence <= 1.0 for r in results)


#: The reader as the label source (blended), and beside the label model: heard by the emit model only,
#: or with its P(rationale) blended into what is listed while the label model reads the selector's best.
BESIDE_LABEL_MODEL = {**SETTINGS, "reader_weight": 0.0, "label_source": "model"}
BLENDED_BESIDE_LABEL_MODEL = {**SETTINGS, "reader_weight": 0.5, "label_source": "model"}
#: The reader only listing: emission as without it, then it reads the emitted abstracts alone.
LISTS_ONLY = {**BLENDED_BESIDE_LABEL_MODEL, "reader_lists_only": True}
#: The label from both stance models: the label model's answer and the reader's stance, averaged.
BOTH_LABEL = {**BLENDED_BESIDE_LABEL_MODEL, "label_source": "both"}


@pytest.mark.parametrize(
    "settings",
    [SETTINGS, BESIDE_LABEL_MODEL, BLENDED_BESIDE_LABEL_MODEL, LISTS_ONLY, BOTH_LABEL],
    ids=["reader-labels", "model-labels", "model-labels-blended-listing", "lists-only", "both-label"],
)
def test_serving_with_the_reader_matches_the_stored_outputs(
    run: Path, scifact, tmp_path: Path, settings: dict
) -> None:
    """One path: the Verifier reading live gives the predictions the decision layer computes from the
    stored out-of-fold outputs (same fold models, same emit model, same settings)."""
    from sciverify.decision.rule import picks, stored_label_probs, to_prediction
    from sciverify.models.calibration import LABEL_CALIBRATION_FILE, LabelCalibrator
    from sciverify.models.emit import READER_EMIT_FEATURES
    from sciverify.pipeline.config import PipelineConfig
    from sciverify.pipeline.verify import Verifier

    claims = read_claims(scifact.train)
    outputs = read_run_outputs(run, claims, "minilm", folds=[0])
    outputs = attach_reader(outputs, read_jsonl(run / "fold-0" / "reader-minilm.jsonl"))
    cfg = learned_decision(settings, 5)
    # the emit model of these settings (with the reader's columns), fitted on both folds' stored outputs
    reads = fold_rows(run, "reader-minilm.jsonl", [0, 1])
    both = attach_reader(read_run_outputs(run, claims, "minilm"), reads)
    reader_keys = ("reader_reads", "reader_weight", "label_source", "reader_lists_only")
    grid = {key: (value,) for key, value in settings.items() if key not in reader_keys}
    grid["reader"] = ({key: settings[key] for key in reader_keys if key in settings},)
    emit = choose_decision(both, 5, grid).emit
    heard = emit.features[-len(READER_EMIT_FEATURES) :] == READER_EMIT_FEATURES
    assert heard == (not cfg.reader_lists_only) == emit.hears_reader
    calibrator = LabelCalibrator.load(run / "minilm+reader-minilm" / LABEL_CALIBRATION_FILE)
    stored = []
    for c in outputs:
        limited = [x.limit_reads(cfg) for x in c.candidates]
        probs = stored_label_probs(limited, cfg)
        chosen = picks(limited, probs, cfg, emit=emit)
        p_label = {v.candidate: float(calibrator.predict([probs[v.candidate]])[0]) for v in chosen}
        stored.append(to_prediction(c.claim.id, c.doc_ids, chosen, p_label))

    models = tmp_path / "models"
    shutil.copytree(run / "models" / "fold-0" / "rationale", models / "rationale")
    shutil.copytree(run / "models" / "fold-0" / "reader-minilm", models / "reader")
    if cfg.uses_label_model:
        shutil.copytree(run / "models" / "fold-0" / "label-minilm", models / "label")
    emit.save(models / "rationale" / "emit.json")
    calibrator.save(models / "rationale" / LABEL_CALIBRATION_FILE)
    pipeline = PipelineConfig().with_k(5)
    from dataclasses import replace

    verifier = Verifier.load(model_dir=models, config=replace(pipeline, decision=cfg))
    assert (verifier.labeler is None) == (cfg.label_source == "reader") and verifier.reader is not None
    read_pairs, pairs_read = verifier.reader.read_pairs, []

    def counted(text: str, pairs: list) -> np.ndarray:
        pairs_read.append(len(pairs))
        return read_pairs(text, pairs)

    verifier.reader.read_pairs = counted  # type: ignore[method-assign]
    live = verifier.predict([c.claim for c in outputs])
    emitted = sum(len(p.evidence) for p in live)
    if cfg.reader_lists_only:  # it reads the emitted abstracts only, never a claim with none
        assert len(pairs_read) == sum(1 for p in live if p.evidence)
        assert sum(pairs_read) <= cfg.reader_reads * emitted
        # the evidence view shows more abstracts than the verdicts: it reads those too, and lists the
        # leaderboard's abstracts as predict does
        predicted = sum(pairs_read)
        views = verifier.verify_batch([c.claim.text for c in outputs])
        shown = sum(1 for v in views for a in v if a.rationale)  # related papers are not read
        assert predicted <= sum(pairs_read) - predicted <= cfg.reader_reads * shown
        for view, pred in zip(views, live, strict=True):
            listed = {
                str(a.doc_id): a.listed or tuple(r.index for r in a.rationale)
                for a in view
                if a.in_prediction
            }
            assert listed == {key: ev.sentences for key, ev in pred.evidence.items()}
    else:
        assert sum(pairs_read) > cfg.reader_reads * emitted
    assert [p.id for p in live] == [p.id for p in stored]
    for a, b in zip(live, stored, strict=True):
        assert a.evidence.keys() == b.evidence.keys(), a.id
        for key in a.evidence:
            assert a.evidence[key].label == b.evidence[key].label
            assert a.evidence[key].sentences == b.evidence[key].sentences
            assert a.evidence[key].confidence == pytest.approx(b.evidence[key].confidence, abs=2e-3)
            assert a.evidence[key].p_label_correct == pytest.approx(b.evidence[key].p_label_correct, abs=2e-3)


def test_a_second_reader_role_is_decided_on_the_same_folds(run: Path, scifact) -> None:
    """``--reader-role list`` chooses from its own grid over the outputs the folds already hold (no fold
    trains again) and writes its own decision and final folder beside the first role's."""
    from dataclasses import replace

    from sciverify.decision.grid import READER_LIST_OPTIONS
    from sciverify.pipeline.verify import Verifier

    before = {p: p.stat().st_mtime for p in run.glob("fold-*/*.jsonl")}
    config = CvConfig(out_dir=run, folds=2, tiny=True, label_base="minilm", seed=5, reader="minilm")
    summary = run_cv(replace(config, reader_role="list"), log=lambda _m: None)
    assert {p: p.stat().st_mtime for p in run.glob("fold-*/*.jsonl")} == before
    assert (run / "minilm+reader-minilm-list" / "summary.json").exists() and summary["claims"] == 24
    reader_keys = ("reader_reads", "reader_weight", "reader_lists_only")
    for fold in summary["chosen_per_fold"]:
        chosen = {k: v for k, v in fold.items() if k in reader_keys}
        assert chosen in READER_LIST_OPTIONS
    final = run / "models" / "final-minilm+reader-minilm-list"
    verifier = Verifier.load(model_dir=final)
    decision = verifier.config.decision
    assert decision.label_source == "model" and not verifier.emit.hears_reader
    assert (final / "reader").is_dir() == decision.uses_reader == decision.reader_lists_only
    manifest = json.loads((final / "rationale" / "manifest.json").read_text())
    assert "--reader-role list" in manifest["command"]


def test_the_reader_from_the_label_stage_starts_where_the_label_model_did(tmp_path: Path) -> None:
    """(R), CI-sized: ``--reader mpnet6-all`` trains every fold's reader from the label model's shared
    entailment stage (trained once, alone, first), and ``--reader-role every`` decides among every option,
    the label from both stance models among them."""
    from sciverify.decision.grid import READER_EVERY_OPTIONS

    out = tmp_path / "run"
    config = CvConfig(
        out_dir=out,
        folds=2,
        tiny=True,
        label_base="mpnet6-all",
        seed=5,
        reader="mpnet6-all",
        reader_role="every",
        final=False,
    )
    summary = run_cv(config, log=lambda _m: None)
    stage = out / "models" / "aux-mpnet6-all.pt"
    assert stage.exists() and not list((out / "models").glob("reader-work/aux-*.pt"))
    starts = set()
    for f in (0, 1):
        report = json.loads(
            (out / "models" / f"fold-{f}" / "reader-mpnet6-all" / "training.json").read_text()
        )
        assert report["aux_checkpoint"] == stage.name and report["start"].startswith("label-")
        starts.add(report["start"])
        assert read_jsonl(out / f"fold-{f}" / "reader-mpnet6-all.jsonl")
    assert len(starts) == 1  # one stage, one start for every fold
    assert (out / "mpnet6-all+reader-mpnet6-all-every" / "summary.json").exists() and summary["claims"] == 24
    keys = ("reader_reads", "reader_weight", "label_source", "reader_lists_only")
    assert any(o.get("label_source") == "both" for o in READER_EVERY_OPTIONS)
    for fold in summary["chosen_per_fold"]:
        assert {k: v for k, v in fold.items() if k in keys} in READER_EVERY_OPTIONS
